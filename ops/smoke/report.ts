/**
 * The smoke test's output: one aligned line per check. Every reason passes through `clean`,
 * which masks the password, the tokens received and anything shaped like a JWT, and escapes
 * control characters, so no answer of the server can smuggle a secret or a terminal escape
 * into the output.
 */
import type { CheckResult } from './checks.ts';

/** A JWT: its header is a JSON object, `{"` in base64url. Host names never start with it. */
const JWT_SHAPE = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
const MAX_DETAIL = 240;

/** Masks secrets and JWT-shaped strings, escapes control characters, keeps it to one short line. */
export function clean(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets) if (secret !== '') result = result.split(secret).join('[REDACTED]');
  result = result
    .replace(JWT_SHAPE, '[JWT]')
    .replace(/\s+/g, ' ')
    .replace(
      /[\p{Cc}\p{Cf}\u2028\u2029]/gu,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    .trim();
  return result.length > MAX_DETAIL ? `${result.slice(0, MAX_DETAIL - 1)}…` : result;
}

const VERDICT = { pass: 'pass', fail: 'FAIL', skip: 'skip' } as const;

/** `pass  1 login                    200    143 ms  reason` */
export function formatCheck(index: number, result: CheckResult, secrets: Iterable<string>): string {
  const status = result.status === null ? '-' : String(result.status);
  const ms = result.ms === null ? '-' : `${result.ms} ms`;
  return [
    VERDICT[result.verdict].padEnd(4),
    String(index),
    result.name.padEnd(23),
    status.padStart(3),
    ms.padStart(8),
    '',
    clean(result.detail, secrets),
  ].join(' ');
}

/** The last line: how many checks passed. */
export function formatSummary(results: readonly CheckResult[]): string {
  const count = (verdict: CheckResult['verdict']) => results.filter((r) => r.verdict === verdict).length;
  const [passed, failed, skipped] = [count('pass'), count('fail'), count('skip')];
  if (passed === results.length) return `smoke: all ${passed} checks passed`;
  return `smoke: ${failed} failed, ${skipped} skipped, ${passed} passed of ${results.length} checks`;
}
