/**
 * `npm run smoke` as a function: argv and environment in, exit status out (0 every check
 * passed, 1 a check failed or was skipped, 2 a usage error). The outside world is passed
 * in; ops/smoke.ts passes the real one.
 */
import { type CheckResult, runChecks } from './checks.ts';
import { createRequester } from './http.ts';
import { clean, formatCheck, formatSummary } from './report.ts';
import { parseInvocation, USAGE } from './usage.ts';

export interface SmokeDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Writes one line to stdout; the newline is added by the writer. */
  readonly stdout: (line: string) => void;
  /** Writes one line to stderr. */
  readonly stderr: (line: string) => void;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** Default: the system clock. */
  readonly now?: () => Date;
}

export async function runSmoke(argv: readonly string[], deps: SmokeDeps): Promise<number> {
  const invocation = parseInvocation(argv, deps.env);
  if (invocation.kind === 'help') {
    deps.stdout(USAGE);
    return 0;
  }
  if (invocation.kind === 'usage-error') {
    deps.stderr(`error: ${invocation.message}\n`);
    deps.stderr(USAGE);
    return 2;
  }
  const { api, username, password, timeoutMs, plainHttp } = invocation.settings;
  const secrets = new Set([password]);
  if (plainHttp)
    deps.stderr('warning: plain http to a remote host: the password crosses the network unencrypted');
  deps.stdout(`smoke: ${clean(api, secrets)} as ${clean(JSON.stringify(username), secrets)}`);

  const results: CheckResult[] = [];
  const checks = runChecks({
    api,
    username,
    password,
    request: createRequester({ fetch: deps.fetch ?? fetch, timeoutMs }),
    now: deps.now ?? (() => new Date()),
    secret: (value) => secrets.add(value),
  });
  for await (const result of checks) {
    results.push(result);
    deps.stdout(formatCheck(results.length, result, secrets));
  }
  deps.stdout(formatSummary(results));
  return results.every((result) => result.verdict === 'pass') ? 0 : 1;
}
