/**
 * Published limits (draft-ietf-httpapi-ratelimit-headers): a policy is what `RateLimit-Policy`
 * states of a limit, a state what `RateLimit` says is left of it for this caller.
 */

export interface QuotaPolicy {
  /** The policy's name in both fields. */
  readonly name: string;
  readonly quota: number;
  readonly windowSeconds: number;
}

export interface QuotaState {
  /** The name of the policy this is left of. */
  readonly policy: string;
  readonly remaining: number;
  /** Seconds until the quota is whole again (0: it is whole now). */
  readonly resetSeconds: number;
}
