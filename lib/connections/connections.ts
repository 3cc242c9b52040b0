/**
 * Connections (docs/platforms.md, "Connections"): a customer's approval of a platform, one per
 * (platform, customer). It belongs to the customer, not to the administrator who approved it: it
 * outlives that person's password, removal or administration, and ends only when an
 * administrator of the customer ends it, the operator removes the platform, the platform revokes
 * its refresh token, or a refresh token or code of it is used twice.
 */
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { ConnectionEndReason } from '../audit/audit.ts';
import type { AuditRecorder } from '../audit/recorder.ts';
import type { Scope } from '../scopes.ts';

export const CONNECTION_ID_PREFIX = 'con_';

/** `con_` and 22 base64url characters: 128 random bits. */
export const newConnectionId = () => `${CONNECTION_ID_PREFIX}${randomBytes(16).toString('base64url')}`;

export const ConnectionIdSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^con_[A-Za-z0-9_-]{22}$/, 'is not a connection id'),
);

export interface Connection {
  readonly connectionId: string;
  /** The platform's client id. */
  readonly clientId: string;
  readonly customerId: string;
  /** What the customer's administrator approved last; a new approval replaces them. */
  readonly scopes: readonly Scope[];
  /** The username of the administrator who approved last. */
  readonly approvedBy: string;
  readonly approvedAt: string;
  /** The last refresh, at most hourly (LAST_USE_PRECISION_MS); absent until the first. */
  readonly lastUsedAt?: string;
}

export interface Approval {
  readonly clientId: string;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  readonly approvedBy: string;
  readonly at: Date;
}

export interface ConnectionStore {
  /**
   * Creates the customer's connection to the platform, or updates the one there (its id stays,
   * its scopes become the approved ones). Returns the connection as written.
   */
  approve(approval: Approval): Promise<Connection>;
  /** A consistent read of the customer's connection to the platform. */
  find(clientId: string, customerId: string): Promise<Connection | null>;
  /** The customer's connections, eventually consistent (its index). */
  listByCustomer(customerId: string): Promise<Connection[]>;
  /** Deletes the connection if it is still the one of that id; false when it was not there. */
  remove(connection: Pick<Connection, 'clientId' | 'customerId' | 'connectionId'>): Promise<boolean>;
  /** Sets `lastUsedAt`, at most once per LAST_USE_PRECISION_MS; never rejects for a lost race. */
  recordUse(
    connection: Pick<Connection, 'clientId' | 'customerId' | 'connectionId'>,
    at: Date,
  ): Promise<void>;
}

export interface EndConnectionDeps {
  readonly connections: Pick<ConnectionStore, 'remove'>;
  /** The customer's audit trail, which records the end. */
  readonly recorder: AuditRecorder;
}

/** Who ended a connection, from where and why: its audit event's. */
export interface ConnectionEnd {
  readonly actor: string;
  readonly sourceIp: string;
  readonly reason: ConnectionEndReason;
}

/**
 * Ends a connection: its item goes, which every refresh and code exchange reads (its refresh
 * tokens get `invalid_grant` at once) and the authorizer reads with the platform (its access
 * tokens stop within the revocation bound); then the end is in the customer's audit trail.
 * False when it was gone already (or is another approval's now).
 */
export async function endConnection(
  deps: EndConnectionDeps,
  connection: Pick<Connection, 'clientId' | 'customerId' | 'connectionId'>,
  end: ConnectionEnd,
): Promise<boolean> {
  if (!(await deps.connections.remove(connection))) return false;
  await deps.recorder.record({
    customerId: connection.customerId,
    type: 'connection.ended',
    actor: end.actor,
    source: 'api',
    ...(end.sourceIp !== '' && { sourceIp: end.sourceIp }),
    clientId: connection.clientId,
    connectionId: connection.connectionId,
    reason: end.reason,
  });
  return true;
}
