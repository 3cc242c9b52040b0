// JSON logs on Powertools' Logger (docs/operations.md, "Logs"). Callers pass event names and reason
// codes, never bodies, passwords or tokens; `redact` is the safety net, on every key and value.
import { type LogItem, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { readLogConfig } from './config/log.ts';
import { SERVICE } from './stage.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export interface LambdaLogger extends Logger {
  readonly powertools: PowertoolsLogger;
}

/** Name, message and code only, so no payload rides along in an error or its cause. */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const described: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') described.code = code;
  if (error.cause !== undefined) described.cause = describeError(error.cause);
  return described;
}

export const REDACTED = '[REDACTED]';

/** Keys whose value is a secret whatever it holds: passwords, tokens, credentials, bodies. */
const SECRET_KEY =
  /pass(word|wd|phrase)|secret|token|authori[sz]ation|cookie|credential|private_?key|api_?key|^body$/i;
/** JSON Web Key members that hold private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4). */
const JWK_PRIVATE_MEMBERS: ReadonlySet<string> = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);
/** A compact JWS or JWE: its protected header is JSON, so it starts with `eyJ` (`{"`). */
const JWT = /eyJ[A-Za-z0-9_-]*(\.[A-Za-z0-9_-]*){2,4}/g;
const BEARER = /\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;

const isSecretKey = (key: string) =>
  JWK_PRIVATE_MEMBERS.has(key) || SECRET_KEY.test(key.replaceAll('-', '_'));

/** A JSON replacer: a secret-named key's value goes whole; in other strings, JWTs, Bearer and PEM keys. */
export function redact(key: string, value: unknown): unknown {
  if (key !== '' && value !== undefined && isSecretKey(key)) return REDACTED;
  if (typeof value !== 'string') return value;
  return value
    .replace(JWT, REDACTED)
    .replace(BEARER, `Bearer ${REDACTED}`)
    .replace(PEM_PRIVATE_KEY, REDACTED);
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): LambdaLogger {
  // One line per event to `write`, not Powertools' own Console; a subclass per logger, so what it logs
  // while being constructed (a sampling notice) reaches `write` too.
  const SinkLogger = class extends PowertoolsLogger {
    protected override printLog(_level: number, item: LogItem): void {
      item.prepareForPrint();
      write(JSON.stringify(item.getAttributes(), this.getJsonReplacer()));
    }
  };
  const powertools = new SinkLogger({ serviceName: SERVICE, logLevel: level, jsonReplacerFn: redact });
  // `event` repeats the message: the name queries, metric filters and tests select lines by.
  const emit =
    (method: LogLevel) =>
    (event: string, fields: Record<string, unknown> = {}) =>
      powertools[method](event, { event, ...fields });
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), powertools };
}

// The stage's level as Powertools' `logLevel` option, so POWERTOOLS_LOG_LEVEL is not read; Lambda's
// AWS_LAMBDA_LOG_LEVEL (advanced logging controls) still wins.
export const logger: LambdaLogger = createLogger(readLogConfig().level satisfies LogLevel);
