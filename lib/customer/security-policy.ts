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

/**
 * A change of the policy: each rule given is set, one left out keeps its value (a console or
 * script that knows only the passkey rule never turns the DPoP rule off).
 */
export const SecurityPolicySchema = v.pipe(
  v.strictObject(
    {
      administratorsRequirePasskey: v.optional(v.boolean('must be true or false')),
      shipmentsWriteRequiresDpop: v.optional(v.boolean('must be true or false')),
    },
    'must be an object of administratorsRequirePasskey and shipmentsWriteRequiresDpop only',
  ),
  v.check(
    (change) =>
      change.administratorsRequirePasskey !== undefined || change.shipmentsWriteRequiresDpop !== undefined,
    'must set administratorsRequirePasskey or shipmentsWriteRequiresDpop',
  ),
);
export type SecurityPolicyChange = v.InferOutput<typeof SecurityPolicySchema>;

export const policyView = (policy: SecurityPolicy) => ({
  administratorsRequirePasskey: policy.administratorsRequirePasskey,
  shipmentsWriteRequiresDpop: policy.shipmentsWriteRequiresDpop,
});

/** The detail of a policy turned on from a password's session. */
export const POLICY_NEEDS_PASSKEY =
  'Only a session you began with a passkey may require passkeys: sign in with yours first, so you keep a way in.';

export type PolicyDeps = Pick<AdministrationDeps, 'clock' | 'metrics' | 'recorder'> & {
  readonly policies: SecurityPolicies;
};

export const readPolicy = async (deps: PolicyDeps, admin: Administrator) =>
  policyView(await deps.policies.find(admin.customerId));

export async function setPolicy(deps: PolicyDeps, admin: Administrator, change: SecurityPolicyChange) {
  if (change.administratorsRequirePasskey === true && admin.signInMethod !== 'passkey')
    throw new AppError('PASSKEY_REQUIRED', { detail: POLICY_NEEDS_PASSKEY });
  const current = await deps.policies.find(admin.customerId);
  const policy: SecurityPolicy = {
    administratorsRequirePasskey: change.administratorsRequirePasskey ?? current.administratorsRequirePasskey,
    shipmentsWriteRequiresDpop: change.shipmentsWriteRequiresDpop ?? current.shipmentsWriteRequiresDpop,
  };
  await deps.policies.set(admin.customerId, policy, { actor: `user:${admin.username}`, at: deps.clock() });
  // An event per rule the change names, as before for the passkey rule alone.
  if (change.administratorsRequirePasskey !== undefined)
    await recordChange(
      deps,
      admin,
      policy.administratorsRequirePasskey ? 'policy.passkeys.required' : 'policy.passkeys.optional',
      {},
    );
  if (change.shipmentsWriteRequiresDpop !== undefined)
    await recordChange(
      deps,
      admin,
      policy.shipmentsWriteRequiresDpop ? 'policy.dpop.required' : 'policy.dpop.optional',
      {},
    );
  return policyView(policy);
}
