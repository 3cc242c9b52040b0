/**
 * The one way every writer of the audit trail writes it: the self-service API, the OAuth
 * endpoints' failed client authentications and the admin CLI. An event is written once its
 * change is made; a write that fails then is counted (`AuditWriteFailed`, which its alarm
 * watches) and told, never the change's failure: the change stands, and a failure would send
 * the caller to make another client or secret.
 */
import { describeError, type Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import { type Clock, systemClock } from '../time.ts';
import {
  type AuditEventType,
  type AuditWriter,
  auditEvent,
  clientActor,
  type NewAuditEvent,
} from './audit.ts';

/** What a failed write was about, for its warning: an event's type, and its client or user. */
export interface AuditWriteFailure {
  readonly type: AuditEventType;
  readonly customerId: string;
  readonly clientId?: string | undefined;
  readonly secretId?: string | undefined;
  readonly username?: string | undefined;
  /** A scheduled expiry's time. */
  readonly at?: string | undefined;
  /** `recorded`: an event appended; `scheduled` or `taken back`: a secret's expiry event. */
  readonly write: 'recorded' | 'scheduled' | 'taken back';
  readonly error: unknown;
}

export interface AuditRecorder {
  /** Appends `event` as it happens now. Never rejects. */
  record(event: NewAuditEvent): Promise<void>;
  /** Runs another write of the trail (a scheduled expiry, or its take-back) by the same rule. Never rejects. */
  guard(failure: Omit<AuditWriteFailure, 'error'>, write: () => Promise<void>): Promise<void>;
}

export function createAuditRecorder(deps: {
  readonly trail: AuditWriter;
  readonly retentionSeconds: number;
  readonly metrics: MetricsRecorder;
  /** How a failure is told: a log line in Lambda, a line on the operator's terminal. */
  readonly warn: (failure: AuditWriteFailure) => void;
  readonly clock?: Clock;
}): AuditRecorder {
  const clock = deps.clock ?? systemClock;
  const guard: AuditRecorder['guard'] = async (failure, write) => {
    try {
      await write();
    } catch (error) {
      deps.metrics.count({ name: 'AuditWriteFailed' });
      deps.warn({ ...failure, error });
    }
  };
  return {
    guard,
    record: (event) =>
      guard(
        {
          type: event.type,
          customerId: event.customerId,
          clientId: event.clientId,
          secretId: event.secretId,
          username: event.username,
          write: 'recorded',
        },
        () => deps.trail.append(auditEvent(event, clock(), deps.retentionSeconds)),
      ),
  };
}

/** The functions' warning of a failed write: one log line with its event's ids and the error described. */
export const logAuditFailure =
  (logger: Pick<Logger, 'warn'>) =>
  ({ write, type, clientId, error }: AuditWriteFailure) =>
    logger.warn(
      write === 'taken back' ? 'scheduled audit event not taken back' : 'audit event not recorded',
      {
        type,
        clientId,
        error: describeError(error),
      },
    );

/** A failed authentication of a client that exists: only that client's failures concern its customer. */
export interface FailedClientAuthentication {
  readonly customerId: string;
  readonly clientId: string;
  /** The secret presented, when it matched one of the client's (a disabled client's, or an expired one). */
  readonly secretId?: string;
  readonly sourceIp: string;
  readonly reason: string;
}

/** What the OAuth endpoints' client authentication records (lib/clients/client-auth.ts). */
export interface ClientAuthAudit {
  /**
   * Never rejects: a trail that cannot be written is the recorder's warning and metric, and the
   * client gets the answer it would have got. Awaited beside the throttle's settle, so it adds no step.
   */
  failedAuthentication(failure: FailedClientAuthentication): Promise<void>;
}

export const createClientAuthAudit = (recorder: AuditRecorder): ClientAuthAudit => ({
  failedAuthentication: ({ customerId, clientId, secretId, sourceIp, reason }) =>
    recorder.record({
      customerId,
      type: 'client.authentication.failed',
      actor: clientActor(clientId),
      source: 'api',
      sourceIp,
      clientId,
      ...(secretId !== undefined && { secretId }),
      reason,
    }),
});
