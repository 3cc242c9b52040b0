/**
 * Structured logging on Powertools for AWS Lambda's Logger: one JSON line per event on stderr,
 * which Lambda ships to CloudWatch. Every line names the service (`parcel-auth`) and, inside
 * an invocation, carries its request id (`function_request_id`): lib/http/'s middy chains
 * (`endpoint`, `oauthEndpoint`, `authorizerHandler`) add Powertools' `injectLambdaContext` middleware.
 *
 * Callers pass event names and reason codes, never request bodies, passwords or tokens; errors
 * are reduced to name, message and code so no payload rides along in a cause. Should a caller
 * get that wrong, `redact` still keeps secrets out of the line: it runs on every key and value
 * of every line, at any depth, as Powertools serialises it.
 */
import { type LogItem, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { SERVICE } from './stage.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const isLogLevel = (level: string | undefined): level is LogLevel => LEVELS.includes(level as LogLevel);

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

/** A Logger that can also carry a Lambda invocation's context on its lines. */
export interface LambdaLogger extends Logger {
  /** The Powertools Logger behind it, for `injectLambdaContext`. */
  readonly powertools: PowertoolsLogger;
}

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

/**
 * The logger's safety net, a JSON replacer: the value of a secret-named key (password,
 * refreshToken, authorization, a JWK's `d`, …) is replaced whole, and in every other string a
 * JWT, a Bearer credential or a PEM private key is replaced where it appears.
 */
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
  // Powertools prints through its own Console, pretty-printed under POWERTOOLS_DEV; this one
  // line per event goes to `write`. A subclass per logger, so lines Powertools logs while it
  // is being constructed (a sampling notice) already reach `write`.
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

/**
 * The log level of the stage: LOG_LEVEL, which serverless.yml sets per stage, given to
 * Powertools as its `logLevel` option (so POWERTOOLS_LOG_LEVEL is not read). Lambda's own
 * AWS_LAMBDA_LOG_LEVEL, when the function has advanced logging controls, still wins.
 */
function stageLevel(): LogLevel {
  const level = process.env.LOG_LEVEL?.toLowerCase();
  return isLogLevel(level) ? level : 'info';
}

/** The container's logger. */
export const logger: LambdaLogger = createLogger(stageLevel());
