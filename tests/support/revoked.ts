/**
 * The authorizer's verdict on a user's access token, uncached: verified with the test keys, then
 * checked against `users` (the account store under test).
 */
import { createRevocationCheck, type UserStatusReader } from '../../lib/revocation/revocation.ts';
import type { Clock } from '../../lib/time.ts';
import { createAccessTokenVerifier } from '../../lib/tokens/verify.ts';
import { TOKEN_SETTINGS, type testKeys } from './keys.ts';
import { memoryClients, noConnections } from './memory-clients.ts';
import { noMetrics } from './memory-metrics.ts';

export function revocationAt(
  users: UserStatusReader,
  keys: Awaited<ReturnType<typeof testKeys>>,
  clock: Clock,
) {
  const check = createRevocationCheck({
    clients: memoryClients(),
    connections: noConnections,
    metrics: noMetrics,
    users,
    cacheTtlMs: 0,
  });
  const access = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock });
  return {
    verify: (token: string) => access.verify(token),
    isRevoked: check.isRevoked,
    revoked: async (token: string) => check.isRevoked(await access.verify(token)),
  };
}
