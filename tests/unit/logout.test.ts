/**
 * A logout beside a full list of revoked sessions (MAX_REVOKED_SESSIONS): the user's cutoff
 * moves instead, which ends every session of the user, and the log says so. The DynamoDB store's
 * side of it is in tests/e2e/package.test.ts; here the flow over the in-memory stores.
 */
import { beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../lib/log.ts';
import { MAX_REVOKED_SESSIONS } from '../../lib/revocation/revocation.ts';
import { endSession, type RefreshDeps, startSession } from '../../lib/sessions/sessions.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import { createRefreshTokenVerifier } from '../../lib/tokens/verify.ts';
import { TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { memorySessions } from '../support/memory-sessions.ts';
import { memoryAccounts } from '../support/memory-users.ts';
import { revocationAt } from '../support/revoked.ts';

let keys: Awaited<ReturnType<typeof testKeys>>;
beforeAll(async () => {
  keys = await testKeys();
});

it('ends every session of a user whose revoked sessions are full, and warns of it', async () => {
  let now = new Date();
  const clock = () => now;
  const accounts = memoryAccounts(clock);
  const lines: string[] = [];
  const deps: RefreshDeps = {
    metrics: noMetrics,
    users: accounts,
    store: memorySessions(),
    tokens: createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }),
    refreshTokens: createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock }),
    settings: { maxLifetimeSeconds: 86_400, reuseGraceSeconds: 0 },
    accessTtlSeconds: TOKEN_SETTINGS.accessTtlSeconds,
    clock,
    logger: createLogger('info', (line) => lines.push(line)),
  };
  await accounts.createUser({ username: 'Busy', passwordHash: '$2b$04$hash', customerId: 'C-1' });
  now = new Date(now.getTime() + 1500);
  const user = await accounts.findByUsername('Busy');
  if (user === null) throw new Error('user not created');
  const leaving = await startSession(deps, user, now);
  const staying = await startSession(deps, user, now);
  const until = Math.floor(now.getTime() / 1000) + 3600;
  for (let i = 0; i < MAX_REVOKED_SESSIONS; i++) await accounts.revokeSessionTokens('Busy', `s-${i}`, until);
  const { revoked } = revocationAt(accounts, keys, clock);
  expect(await revoked(staying.accessToken)).toBe(false);

  await endSession(deps, leaving.refreshToken);

  expect(await revoked(leaving.accessToken)).toBe(true);
  expect(await revoked(staying.accessToken), 'another session’s token, issued before the cutoff').toBe(true);
  expect((await accounts.findStatus('Busy'))?.revokedSessions, 'the list, gone with the cutoff').toEqual(
    new Set(),
  );
  const warning = lines.find((line) => line.includes('revoked sessions full'));
  expect(warning).toContain('"username":"Busy"');
  expect(warning).not.toContain(leaving.refreshToken);
});
