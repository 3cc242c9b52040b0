/**
 * The one place the published limits become header fields: `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-10), each a Structured Field List (RFC 9651) of policy
 * names as Strings with Integer parameters.
 *
 * ```
 * RateLimit-Policy: "username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1
 * RateLimit: "username";r=4;t=172740, "address";r=99;t=7140
 * ```
 */
import type { QuotaPolicy, QuotaState } from '../quota.ts';

/** RFC 9651 section 3.3.1: the largest Integer a field may carry. */
const MAX_INTEGER = 999_999_999_999_999;

/** The header fields of one answer, given what is left of the limits (none: no `RateLimit`). */
export type RateLimitFields = (quota?: readonly QuotaState[]) => Readonly<Record<string, string>>;

/** RFC 9651 section 4.1.6: printable ASCII only, `"` and `\` escaped. */
function sfString(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text))
    throw new Error(`a policy name must be printable ASCII: ${JSON.stringify(text)}`);
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

const isInteger = (value: number) => Number.isSafeInteger(value) && value >= 0 && value <= MAX_INTEGER;

/** A List member: a name already written as a String, with Integer parameters. */
const member = (name: string, parameters: Readonly<Record<string, number>>) =>
  `${name}${Object.entries(parameters)
    .map(([key, value]) => `;${key}=${value}`)
    .join('')}`;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * `q` and `w` must be Integers, and API Gateway's rate (`loginRateLimit`) may be fractional:
 * such a quota is published exactly, over the shortest whole window that makes it whole
 * (0.5 a second is `q=1;w=2`), never rounded into a promise the gateway does not keep.
 */
function wholeQuota({ name, quota, windowSeconds }: QuotaPolicy): readonly [number, number] {
  if (!isInteger(windowSeconds) || windowSeconds === 0)
    throw new Error(`the window of policy ${name} must be a whole number of seconds from 1`);
  const thousandths = Math.round(quota * 1000);
  if (!(quota >= 0) || Math.abs(quota * 1000 - thousandths) > 1e-6)
    throw new Error(`the quota of policy ${name} must be at least 0, with at most 3 decimals`);
  const divisor = gcd(thousandths, 1000);
  const [q, w] = [thousandths / divisor, windowSeconds * (1000 / divisor)];
  if (!isInteger(q) || !isInteger(w)) throw new Error(`the quota of policy ${name} is too large to publish`);
  return [q, w];
}

/** What is left, as Integers: a remaining quota rounded down, a reset rounded up. */
function stateParameters({ remaining, resetSeconds }: QuotaState) {
  const r = Math.min(MAX_INTEGER, Math.max(0, Math.floor(remaining)));
  const t = Math.min(MAX_INTEGER, Math.max(0, Math.ceil(resetSeconds)));
  return Number.isFinite(r) && Number.isFinite(t) ? { r, t } : undefined;
}

/**
 * The fields an endpoint sends under `policies`, checked and written once, when the function
 * starts: a policy that cannot be published fails the container, never a request. `RateLimit`
 * names only published policies, once each, so what a domain hands back cannot make a field
 * invalid; an answer gets no field whose list would be empty.
 */
export function rateLimitFields(policies: readonly QuotaPolicy[]): RateLimitFields {
  const names = new Map<string, string>();
  for (const policy of policies) {
    if (names.has(policy.name)) throw new Error(`policy ${policy.name} is published twice`);
    names.set(policy.name, sfString(policy.name));
  }
  if (policies.length === 0) return () => ({});
  const policyField = policies
    .map((policy) => {
      const [q, w] = wholeQuota(policy);
      return member(names.get(policy.name) ?? '', { q, w });
    })
    .join(', ');
  return (quota = []): Readonly<Record<string, string>> => {
    const listed = new Set<string>();
    const left = quota.flatMap((state) => {
      const name = names.get(state.policy);
      const parameters = stateParameters(state);
      if (name === undefined || parameters === undefined || listed.has(state.policy)) return [];
      listed.add(state.policy);
      return [member(name, parameters)];
    });
    if (left.length === 0) return { 'RateLimit-Policy': policyField };
    return { 'RateLimit-Policy': policyField, RateLimit: left.join(', ') };
  };
}
