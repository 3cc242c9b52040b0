/**
 * The audit trail: who changed a customer's credentials, from where and when, and which
 * authentications of its API clients failed (docs/admin.md, "Audit trail"). An event concerns
 * one customer and is kept for the stage's `auditRetention`, then DynamoDB's TTL deletes it.
 * An event names things by their ids only: never a secret, a digest, a password or a token.
 */
import { describeError, type Logger } from '../log.ts';
import { type Clock, epochSeconds, systemClock } from '../time.ts';

export const AUDIT_EVENT_TYPES = [
  'client.created',
  'client.disabled',
  'client.enabled',
  'client.removed',
  'client.unlocked',
  'client.secret.added',
  'client.secret.removed',
  'client.authentication.failed',
  'user.admin.granted',
  'user.admin.revoked',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** Where an event came from: the admin CLI, or an HTTP endpoint (with the caller's address). */
export type AuditSource = 'operator' | 'api';

/** The prefix of an operator's actor; usernames cannot hold a colon, so no user is mistaken for one. */
export const OPERATOR_ACTOR_PREFIX = 'operator:';
/** An API client acting for itself, as the access log names it. */
export const clientActor = (clientId: string) => `client:${clientId}`;

export interface AuditEvent {
  readonly customerId: string;
  readonly type: AuditEventType;
  /** ISO 8601 with milliseconds: a customer's events sort by it. */
  readonly at: string;
  /** `operator:<name>` (the admin CLI) or `client:<client id>` (its own failed authentication). */
  readonly actor: string;
  readonly source: AuditSource;
  /** An API event's caller; none for the admin CLI's. */
  readonly sourceIp?: string;
  readonly clientId?: string;
  readonly secretId?: string;
  readonly username?: string;
  /** Why an authentication failed: `bad secret` or `disabled client`. */
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

export interface AuditQuery {
  /** One customer's events; undefined: every customer's. */
  readonly customerId?: string;
  readonly limit: number;
}

export interface AuditReader {
  /** Newest first, at most `limit`. */
  list(query: AuditQuery): Promise<AuditEvent[]>;
}

export interface AuditTrail extends AuditWriter, AuditReader {}

/** A failed authentication of a client that exists: only that client's failures concern its customer. */
export interface FailedClientAuthentication {
  readonly customerId: string;
  readonly clientId: string;
  /** The secret presented, when it matched one of the client's (a disabled client's). */
  readonly secretId?: string;
  readonly sourceIp: string;
  readonly reason: string;
}

/** What the OAuth endpoints' client authentication records (lib/clients/client-auth.ts). */
export interface ClientAuthAudit {
  /**
   * Never rejects: a trail that cannot be written is logged as a warning and the client gets
   * the answer it would have got. Awaited beside the throttle's settle, so it adds no step.
   */
  failedAuthentication(failure: FailedClientAuthentication): Promise<void>;
}

export function createClientAuthAudit(deps: {
  readonly trail: AuditWriter;
  readonly logger: Logger;
  readonly retentionSeconds: number;
  readonly clock?: Clock;
}): ClientAuthAudit {
  const clock = deps.clock ?? systemClock;
  return {
    async failedAuthentication({ customerId, clientId, secretId, sourceIp, reason }) {
      const event = auditEvent(
        {
          customerId,
          type: 'client.authentication.failed',
          actor: clientActor(clientId),
          source: 'api',
          sourceIp,
          clientId,
          ...(secretId !== undefined && { secretId }),
          reason,
        },
        clock(),
        deps.retentionSeconds,
      );
      try {
        await deps.trail.append(event);
      } catch (error) {
        deps.logger.warn('audit event not recorded', {
          type: event.type,
          clientId,
          error: describeError(error),
        });
      }
    },
  };
}
