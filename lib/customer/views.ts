/** The self-service API's JSON: what an administrator sees of a client and of an event, and nothing more. */
import type { AuditEvent } from '../audit/audit.ts';
import type { CustomerClient } from '../clients/clients.ts';
import { liveSecrets } from '../clients/secrets.ts';
import type { Connection } from '../connections/connections.ts';

/** A client as its administrators see it: never a digest; an expired secret is gone from it. */
export const clientView = (client: CustomerClient, now: Date) => ({
  clientId: client.clientId,
  name: client.name ?? null,
  scopes: [...client.scopes],
  enabled: client.enabled,
  // RFC 9449's dpop_bound_access_tokens: every token request must carry a DPoP proof.
  dpopBoundAccessTokens: client.dpopBoundAccessTokens === true,
  createdAt: client.createdAt,
  lastUsedAt: client.lastUsedAt ?? null,
  secrets: liveSecrets(client.secrets, now).map((secret) => ({
    secretId: secret.id,
    // A key's (private_key_jwt): the kid its assertions name, and the public JWK.
    ...(secret.key !== undefined && { kid: secret.key.kid, jwk: secret.key.jwk }),
    createdAt: secret.createdAt,
    expiresAt: secret.expiresAt ?? null,
    lastUsedAt: secret.lastUsedAt ?? null,
  })),
});

/** Oldest first, as they were made: a new client joins the end of the list. */
export const clientsView = (clients: readonly CustomerClient[], now: Date) =>
  [...clients]
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.clientId.localeCompare(b.clientId))
    .map((client) => clientView(client, now));

/** An event without its customer (the caller's own) and its retention. */
export const eventView = (event: AuditEvent) => ({
  type: event.type,
  at: event.at,
  actor: event.actor,
  sourceIp: event.sourceIp ?? null,
  ...(event.clientId !== undefined && { clientId: event.clientId }),
  ...(event.secretId !== undefined && { secretId: event.secretId }),
  ...(event.connectionId !== undefined && { connectionId: event.connectionId }),
  ...(event.passkeyId !== undefined && { passkeyId: event.passkeyId }),
  ...(event.username !== undefined && { username: event.username }),
  ...(event.name !== undefined && { name: event.name }),
  ...(event.secretExpiresAt !== undefined && { secretExpiresAt: event.secretExpiresAt }),
  ...(event.reason !== undefined && { reason: event.reason }),
});

/** A connection as its customer's administrators see it (`GET /api/v1/customer/connections`). */
export const connectionView = (connection: Connection, platformName: string) => ({
  connectionId: connection.connectionId,
  clientId: connection.clientId,
  name: platformName,
  scopes: [...connection.scopes],
  approvedBy: connection.approvedBy,
  approvedAt: connection.approvedAt,
  lastUsedAt: connection.lastUsedAt ?? null,
});
