/**
 * A customer's administrators manage its API clients and its administrators themselves
 * (docs/administrators.md): what the self-service API's rules need, and the words of its
 * refusals. The rules, by what they act on: administrator.ts (who the caller is, and what every
 * change asks of it), clients.ts (the customer's clients and their secrets), administrators.ts
 * (granting and ending administration).
 */
import type { Administrations } from '../accounts/repository.ts';
import type { AuditTrail } from '../audit/audit.ts';
import type { AuditRecorder } from '../audit/recorder.ts';
import type { ClientRepository } from '../clients/clients.ts';
import { MAX_LIVE_SECRETS } from '../clients/secrets.ts';
import type { Refusal } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { LockRules } from '../throttle/locks.ts';
import type { ThrottleStore } from '../throttle/throttle.ts';
import type { Clock } from '../time.ts';

/**
 * A customer's security policy (lib/customer/security-policy.ts): a passkey required of its
 * administrators; DPoP-bound tokens required of its clients and platforms for shipments:write.
 */
export interface SecurityPolicy {
  readonly administratorsRequirePasskey: boolean;
  readonly shipmentsWriteRequiresDpop: boolean;
}

/** A customer that never set one. */
export const DEFAULT_SECURITY_POLICY: SecurityPolicy = {
  administratorsRequirePasskey: false,
  shipmentsWriteRequiresDpop: false,
};

export interface SecurityPolicies {
  /** The customer's policy, DEFAULT_SECURITY_POLICY if it has none: a consistent read. */
  find(customerId: string): Promise<SecurityPolicy>;
  /** One write of the whole policy, with who set it and when. */
  set(
    customerId: string,
    policy: SecurityPolicy,
    by: { readonly actor: string; readonly at: Date },
  ): Promise<void>;
}

/** The longest a roll lets the other secrets live on: long enough for any deployment, short enough to end. */
export const MAX_EXPIRE_OTHERS_SECONDS = 30 * 86_400;

export interface AdministrationDeps {
  readonly administrations: Administrations;
  readonly clients: Pick<
    ClientRepository,
    | 'findClient'
    | 'listClients'
    | 'createClient'
    | 'setClientEnabled'
    | 'renameClient'
    | 'removeClient'
    | 'addClientSecret'
    | 'removeClientSecret'
  >;
  /** The customers' security policies: a passkey required of their administrators. */
  readonly policies: SecurityPolicies;
  /** Every change's event, written once the change is made (lib/audit/recorder.ts). */
  readonly recorder: AuditRecorder;
  /** The trail the recorder writes; here, a roll's scheduled expiries and the customer's pages of events. */
  readonly audit: AuditTrail;
  readonly auditRetentionSeconds: number;
  readonly locks: {
    readonly store: ThrottleStore;
    readonly rules: LockRules;
    /** The secret the stage keys its failed-authentication counters with. */
    readonly counterSecret: () => Promise<Uint8Array>;
  };
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

/** The details of the API's own refusals (docs/openapi.yaml shows them). */
export const REFUSALS = {
  noSuchClient: 'No such client.',
  noSuchSecret: 'No such live secret.',
  noSuchUser: 'No such user.',
  thirdSecret: `The client has ${MAX_LIVE_SECRETS} live secrets: remove one first, or wait until one expires.`,
  lastSecret: 'This is the client’s last live secret: add another first, or disable or remove the client.',
  lastLastingSecret:
    'This is the client’s last secret that does not expire: the others stop by themselves. Add another first.',
  otherCredentialKind:
    'The client authenticates with keys (private_key_jwt): it takes no secret. Register a client of secrets for those.',
  keyExists: 'The client has a live key of this kid: give the new key another kid.',
  lastAdministrator: 'This is the customer’s last administrator: grant administration to another user first.',
  endInProgress: 'Another change of this administration is in progress: try again in a moment.',
} as const;

/** A store's refusal (lib/errors.ts Refusal) as the API says it. */
export const REFUSED: Partial<Record<Refusal, string>> = {
  'no-such-client': REFUSALS.noSuchClient,
  'no-such-secret': REFUSALS.noSuchSecret,
  'no-such-user': REFUSALS.noSuchUser,
  'secrets-full': REFUSALS.thirdSecret,
  'other-credential-kind': REFUSALS.otherCredentialKind,
  'secret-exists': REFUSALS.keyExists,
  'last-live-secret': REFUSALS.lastSecret,
  'last-lasting-secret': REFUSALS.lastLastingSecret,
};
