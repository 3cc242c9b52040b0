/**
 * A customer's security policy (docs/administrators.md, "The customer's passkey policy"): whether
 * its administrators must sign in with a passkey. Checked on every administrators' call (lib/customer/
 * administrator.ts) and every approval on the authorization page; set by an administrator whose
 * own session a passkey began, so nobody turns it on without a way in, or by the carrier's operator.
 */
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import type { AdministrationDeps, SecurityPolicies, SecurityPolicy } from './administration.ts';
import { type Administrator, recordChange } from './administrator.ts';

export const SecurityPolicySchema = v.strictObject(
  { administratorsRequirePasskey: v.boolean('must be true or false') },
  'must be an object of administratorsRequirePasskey only',
);

export const policyView = (policy: SecurityPolicy) => ({
  administratorsRequirePasskey: policy.administratorsRequirePasskey,
});

/** The detail of a policy turned on from a password's session. */
export const POLICY_NEEDS_PASSKEY =
  'Only a session you began with a passkey may require passkeys: sign in with yours first, so you keep a way in.';

export type PolicyDeps = Pick<AdministrationDeps, 'clock' | 'metrics' | 'recorder'> & {
  readonly policies: SecurityPolicies;
};

export const readPolicy = async (deps: PolicyDeps, admin: Administrator) =>
  policyView(await deps.policies.find(admin.customerId));

export async function setPolicy(deps: PolicyDeps, admin: Administrator, policy: SecurityPolicy) {
  if (policy.administratorsRequirePasskey && admin.signInMethod !== 'passkey')
    throw new AppError('PASSKEY_REQUIRED', { detail: POLICY_NEEDS_PASSKEY });
  await deps.policies.set(admin.customerId, policy, { actor: `user:${admin.username}`, at: deps.clock() });
  await recordChange(
    deps,
    admin,
    policy.administratorsRequirePasskey ? 'policy.passkeys.required' : 'policy.passkeys.optional',
    {},
  );
  return policyView(policy);
}
