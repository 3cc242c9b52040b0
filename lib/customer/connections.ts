/**
 * A customer's connections as its administrators see and end them (docs/platforms.md,
 * "Connections"): its own alone, each with the platform's name; ending one stops its refresh
 * tokens at once and its access tokens within the revocation bound.
 */

import { userActor } from '../audit/audit.ts';
import type { ClientReader } from '../clients/clients.ts';
import { type ConnectionStore, type EndConnectionDeps, endConnection } from '../connections/connections.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { Clock } from '../time.ts';
import type { Administrator } from './administrator.ts';
import { connectionView } from './views.ts';

export interface CustomerConnectionDeps extends Omit<EndConnectionDeps, 'connections'> {
  readonly connections: Pick<ConnectionStore, 'listByCustomer' | 'remove'>;
  /** The platforms, for their names; a removed platform's connection is not listed. */
  readonly platforms: ClientReader;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

export const NO_SUCH_CONNECTION = 'No such connection.';

export async function listConnections(deps: CustomerConnectionDeps, admin: Administrator) {
  const connections = await deps.connections.listByCustomer(admin.customerId);
  const platforms = new Map(
    await Promise.all(
      [...new Set(connections.map((c) => c.clientId))].map(
        async (clientId) => [clientId, await deps.platforms.findClient(clientId)] as const,
      ),
    ),
  );
  return connections.flatMap((connection) => {
    const platform = platforms.get(connection.clientId);
    if (platform === null || platform === undefined) return [];
    return [connectionView(connection, platform.name ?? connection.clientId)];
  });
}

export async function endCustomerConnection(
  deps: CustomerConnectionDeps,
  admin: Administrator,
  connectionId: string,
) {
  const connection = (await deps.connections.listByCustomer(admin.customerId)).find(
    (listed) => listed.connectionId === connectionId,
  );
  if (connection === undefined) throw new AppError('NOT_FOUND', { detail: NO_SUCH_CONNECTION });
  const end = {
    actor: userActor(admin.username),
    sourceIp: admin.sourceIp,
    reason: 'ended by an administrator',
    now: deps.clock(),
  } as const;
  if (!(await endConnection(deps, connection, end)))
    throw new AppError('NOT_FOUND', { detail: NO_SUCH_CONNECTION });
  deps.metrics.count({ name: 'ConnectionEnded', by: 'Customer' });
  deps.logger.info('connection ended', {
    connectionId,
    clientId: connection.clientId,
    customerId: admin.customerId,
    endedBy: admin.username,
    sourceIp: admin.sourceIp,
  });
}
