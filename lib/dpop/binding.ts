/**
 * Where DPoP (proof.ts) meets the endpoints: a token request's proof binds the tokens it gets
 * (RFC 9449 section 5), and a protected call with a bound token proves its key again (section 7).
 * docs/clients.md, "Tokens bound to a key".
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { QuotaState } from '../quota.ts';
import type { ReplayStore } from '../replay/replay.ts';
import { type DpopProof, spendProof, verifyProof } from './proof.ts';

/** The `DPoP` header of a token request, checked but not yet spent; undefined without one. */
export async function tokenRequestProof(
  values: readonly string[],
  request: { readonly url: () => string; readonly now: Date },
): Promise<DpopProof | undefined> {
  if (values.length === 0) return undefined;
  // Section 4.3, check 1: one header, one JWT.
  if (values.length > 1)
    throw new AppError('INVALID_DPOP_PROOF', { detail: 'Send one DPoP header, not several.' });
  return verifyProof(values[0] ?? '', { method: 'POST', url: request.url(), now: request.now });
}

export interface BindingDeps {
  readonly replay: ReplayStore;
}

/** The scope whose tokens a customer may require to be bound (its security policy). */
export const DPOP_POLICY_SCOPE = 'shipments:write';
/**
 * How long a token endpoint's container trusts a customer's DPoP rule once read: the warm grant
 * reads nothing more, and a change of the rule lands within this bound (docs/administrators.md).
 */
export const DPOP_POLICY_CACHE_SECONDS = 30;

export interface GrantBindingDeps extends BindingDeps {
  /**
   * Whether the customer requires DPoP-bound tokens of every client holding DPOP_POLICY_SCOPE
   * (lib/customer/security-policy.ts): read only for a grant of that scope without a proof.
   */
  readonly customerRequiresDpop: (customerId: string) => Promise<boolean>;
}

const dpopRefused = (quota: readonly QuotaState[], detail: string) =>
  new AppError('INVALID_DPOP_PROOF', { quota, detail });

/**
 * The thumbprint the grant's tokens are bound to (`cnf.jkt`): the proof's, its `jti` spent now,
 * once the client is known and the grant otherwise good, so a refused grant spends nothing.
 * Undefined without a proof, unless the client is registered for DPoP (`dpop_bound_access_tokens`)
 * or its customer requires DPoP for the grant's shipments:write.
 */
export async function grantBinding(
  deps: GrantBindingDeps,
  grant: {
    readonly client: { readonly dpopBoundAccessTokens?: boolean };
    readonly customerId: string;
    readonly scopes: readonly string[];
    readonly quota: readonly QuotaState[];
  },
  proof: DpopProof | undefined,
): Promise<string | undefined> {
  const { quota } = grant;
  if (proof === undefined) {
    if (grant.client.dpopBoundAccessTokens === true)
      throw dpopRefused(quota, 'This client is registered for DPoP-bound tokens: send a DPoP proof.');
    if (grant.scopes.includes(DPOP_POLICY_SCOPE) && (await deps.customerRequiresDpop(grant.customerId)))
      throw dpopRefused(
        quota,
        `The customer requires DPoP-bound tokens for ${DPOP_POLICY_SCOPE}: send a DPoP proof, or ask for other scopes.`,
      );
    return undefined;
  }
  try {
    await spendProof(deps.replay, proof, randomUUID());
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_DPOP_PROOF')
      throw new AppError('INVALID_DPOP_PROOF', { quota, detail: error.detail, cause: error });
    throw error;
  }
  return proof.jkt;
}

/** RFC 6750's and RFC 9449's schemes, case-insensitive, as the authorizer takes them (lib/auth/authorizer.ts). */
const CREDENTIALS = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;

export interface ProtectedCall {
  /** The one Authorization value the authorizer decided on. */
  readonly authorization: string;
  /** Every value of the DPoP header. */
  readonly dpop: readonly string[];
  readonly method: string;
  /** The URL the client called, without query: read only for a bound token. */
  readonly url: () => string;
  /** The token's `cnf.jkt`, as the (maybe cached) decision says; undefined for a bearer token. */
  readonly jkt: string | undefined;
  readonly now: Date;
}

/**
 * Section 7: a bound token only as `DPoP`, with a proof of its key for this method, URL and
 * token, never seen before; an unbound one only as `Bearer`. On every call, as API Gateway may
 * answer from a decision it cached for the header, which never saw this request's proof.
 */
export async function checkProtectedCall(deps: BindingDeps, call: ProtectedCall): Promise<void> {
  const match = CREDENTIALS.exec(call.authorization);
  const scheme = match?.[1]?.toLowerCase();
  const token = match?.[2];
  // A bearer token's decision: the authorizer read its header, nothing more to prove.
  if (call.jkt === undefined) {
    if (scheme === 'dpop')
      throw new AppError('INVALID_BOUND_TOKEN', {
        detail: 'This access token is bound to no key: send it as Authorization: Bearer.',
      });
    return;
  }
  if (scheme !== 'dpop' || token === undefined)
    throw new AppError('INVALID_BOUND_TOKEN', {
      detail: 'This access token is bound to a key: send it as Authorization: DPoP, with a DPoP proof.',
    });
  if (call.dpop.length !== 1)
    throw new AppError('INVALID_DPOP_PROOF', {
      detail: 'A DPoP-bound access token comes with one DPoP header.',
    });
  const proof = await verifyProof(call.dpop[0] ?? '', {
    method: call.method,
    url: call.url(),
    accessToken: token,
    now: call.now,
  });
  if (proof.jkt !== call.jkt)
    throw new AppError('INVALID_DPOP_PROOF', {
      detail: 'The DPoP proof is not signed by the key the access token is bound to.',
    });
  await spendProof(deps.replay, proof, randomUUID());
}
