/**
 * Structured logging: one JSON line per event on stderr, which Lambda ships to CloudWatch.
 * Callers pass event names and reason codes, never request bodies, passwords or tokens;
 * errors are reduced to name, message and code so no payload rides along in a cause.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const described: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') described.code = code;
  if (error.cause !== undefined) described.cause = describeError(error.cause);
  return described;
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Logger {
  const threshold = ORDER[level];
  const emit =
    (lvl: LogLevel) =>
    (event: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[lvl] < threshold) return;
      write(JSON.stringify({ level: lvl, time: new Date().toISOString(), event, ...fields }));
    };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

const envLevel = process.env.LOG_LEVEL;
/** The container's logger; its level comes from the stage's LOG_LEVEL. */
export const logger: Logger = createLogger(envLevel && envLevel in ORDER ? (envLevel as LogLevel) : 'info');
