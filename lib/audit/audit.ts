/**
 * The audit trail: who changed a customer's credentials, from where and when, and which
 * authentications of its API clients failed (docs/admin.md, "Audit trail"). An event concerns
 * one customer and is kept for the stage's `auditRetention`, then DynamoDB's TTL deletes it.
 * An event names things by their ids only: never a secret, a digest, a password or a token.
 */
import { AppError } from '../errors.ts';
import { epochSeconds } from '../time.ts';

export const AUDIT_EVENT_TYPES = [
  'client.created',
  'client.renamed',
  'client.disabled',
  'client.enabled',
  'client.removed',
  'client.unlocked',
  'client.secret.added',
  /** Added with `expireOthersInSeconds`: the client's other secrets then expire at `secretExpiresAt`. */
  'client.secret.rolled',
  /** Written when its roll is, dated at the expiry and hidden from readers until then. */
  'client.secret.expired',
  'client.secret.removed',
  'client.authentication.failed',
  'user.admin.granted',
  'user.admin.revoked',
  /** An administrator approved a platform on the authorization page (docs/platforms.md). */
  'connection.approved',
  /** A connection ended: by an administrator, by its platform, or for a code or refresh token used twice. */
  'connection.ended',
  /** An administrator registered a passkey of their own (docs/administrators.md, "Passkeys"). */
  'passkey.registered',
  'passkey.removed',
  /** The customer's administrators must sign in with a passkey, or no longer must. */
  'policy.passkeys.required',
  'policy.passkeys.optional',
  /** The customer's clients and platforms need DPoP-bound tokens for shipments:write, or no longer do. */
  'policy.dpop.required',
  'policy.dpop.optional',
  /** An administrator's call from a password's session, refused under that policy. */
  'administration.password.refused',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** The changes an administrator makes through the self-service API: each its event and a metric's value. */
export const ADMINISTRATOR_CHANGES = [
  'client.created',
  'client.renamed',
  'client.disabled',
  'client.enabled',
  'client.removed',
  'client.unlocked',
  'client.secret.added',
  'client.secret.rolled',
  'client.secret.removed',
  'user.admin.granted',
  'user.admin.revoked',
  'passkey.registered',
  'passkey.removed',
  'policy.passkeys.required',
  'policy.passkeys.optional',
  'policy.dpop.required',
  'policy.dpop.optional',
] as const satisfies readonly AuditEventType[];

/** Why a connection ended, as its event says. */
export type ConnectionEndReason =
  | 'ended by an administrator'
  | 'refresh token revoked by the platform'
  | 'authorization code used twice'
  | 'refresh token reused';

/** Where an event came from: the admin CLI, or an HTTP endpoint (with the caller's address). */
export type AuditSource = 'operator' | 'api';

/** The prefix of an operator's actor; usernames cannot hold a colon, so no user is mistaken for one. */
export const OPERATOR_ACTOR_PREFIX = 'operator:';
/** An API client acting for itself, as the access log names it. */
export const clientActor = (clientId: string) => `client:${clientId}`;
/** A customer's administrator, through the self-service API or the console. */
export const userActor = (username: string) => `user:${username}`;

export interface AuditEvent {
  readonly customerId: string;
  readonly type: AuditEventType;
  /** ISO 8601 with milliseconds: a customer's events sort by it. */
  readonly at: string;
  /**
   * `operator:<name>` (the admin CLI), `user:<username>` (an administrator) or
   * `client:<client id>` (its own failed authentication).
   */
  readonly actor: string;
  readonly source: AuditSource;
  /** An API event's caller; none for the admin CLI's. */
  readonly sourceIp?: string;
  readonly clientId?: string;
  readonly secretId?: string;
  /** A platform's connection to the customer (its `clientId` the platform). */
  readonly connectionId?: string;
  /** An administrator's passkey (its credential id), its owner the actor. */
  readonly passkeyId?: string;
  readonly username?: string;
  /** The client's name after the change (created, renamed); the platform's, approved; a passkey's, registered. */
  readonly name?: string;
  /** When the secret (expired) or the client's other secrets (rolled) stop. */
  readonly secretExpiresAt?: string;
  /**
   * Why an authentication failed: `bad secret`, `expired secret` or `disabled client`; why a
   * connection ended (ConnectionEndReason).
   */
  readonly reason?: string;
  /** Epoch seconds: `at` plus the retention; DynamoDB deletes the event some time after. */
  readonly expiresAt: number;
}

/** An event as its writer knows it: the time and the expiry are stamped by {@link auditEvent}. */
export type NewAuditEvent = Omit<AuditEvent, 'at' | 'expiresAt'>;

/** `event` as it happened at `at`, kept for `retentionSeconds`. */
export const auditEvent = (event: NewAuditEvent, at: Date, retentionSeconds: number): AuditEvent => ({
  ...event,
  at: at.toISOString(),
  expiresAt: epochSeconds(at) + retentionSeconds,
});

export interface AuditWriter {
  append(event: AuditEvent): Promise<void>;
}

/** A secret's expiry, known when its roll is made: one event per client, secret and time. */
export interface ScheduledExpiry {
  readonly customerId: string;
  readonly clientId: string;
  readonly secretId: string;
  /** ISO 8601: the event's `at`. */
  readonly at: string;
}

/**
 * The expiry events a roll schedules. Each is addressed by its client, secret and time, so a
 * write sent again lands on the same item, and an expiry that will not happen (the secret
 * removed first, or rolled to sooner) is taken back.
 */
export interface AuditScheduler {
  schedule(event: AuditEvent & ScheduledExpiry): Promise<void>;
  unschedule(expiry: ScheduledExpiry): Promise<void>;
}

/** The expiry events of `secrets` of a client still to come: what removing them takes back. */
export const pendingExpiries = (
  client: { readonly customerId: string; readonly clientId: string },
  secrets: readonly { readonly id: string; readonly expiresAt?: string }[],
  now: Date,
): ScheduledExpiry[] =>
  secrets.flatMap(({ id, expiresAt }) =>
    expiresAt !== undefined && Date.parse(expiresAt) > now.getTime()
      ? [{ customerId: client.customerId, clientId: client.clientId, secretId: id, at: expiresAt }]
      : [],
  );

export interface AuditQuery {
  /** One customer's events; undefined: every customer's. */
  readonly customerId?: string;
  readonly limit: number;
  /** Only events up to this time, so a scheduled expiry is not shown before it happens; absent: all. */
  readonly until?: Date;
  /** One customer's only: the `next` of the page before. */
  readonly after?: string;
}

export interface AuditPage {
  /** Newest first, at most the query's `limit`. */
  readonly events: AuditEvent[];
  /** Where the next page starts (opaque); undefined after the last. */
  readonly next?: string;
}

export interface AuditReader {
  list(query: AuditQuery): Promise<AuditPage>;
}

export interface AuditTrail extends AuditWriter, AuditScheduler, AuditReader {}

/** An event id as the table keys it: `<ISO time>#<16 hex digits>`. */
const EVENT_ID = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f]{16}$/;

/** A page's `next`: the last event id it showed, base64url, so callers treat it as opaque. */
export const encodeAuditCursor = (eventId: string) => Buffer.from(eventId, 'utf8').toString('base64url');

/** The event id a `next` names; VALIDATION_FAILED for anything a page did not give out. */
export function decodeAuditCursor(cursor: string): string {
  const eventId = /^[A-Za-z0-9_-]{1,64}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  if (!EVENT_ID.test(eventId))
    throw new AppError('VALIDATION_FAILED', {
      detail: 'Invalid next.',
      invalidParams: [{ name: 'next', reason: 'must be the next of an earlier page' }],
    });
  return eventId;
}
