/**
 * The authorizer's revocation check and its cache (lib/revocation/revocation.ts): a state read
 * once serves every token for revocationCacheTtl, but a refusal it holds is no answer for a token
 * issued after it was read.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClientStatus,
  createRevocationCheck,
  REREAD_INTERVAL_MS,
  type StatusReadOptions,
  type UserStatus,
} from '../../lib/revocation/revocation.ts';
import type { AccessClaims } from '../../lib/tokens/verify.ts';
import { noConnections } from '../support/memory-clients.ts';
import { noMetrics } from '../support/memory-metrics.ts';

const START = Date.parse('2026-12-01T10:00:00.000Z');
const seconds = (ms: number) => Math.floor(ms / 1000);

/** Readers whose states the tests set, recording each read and whether it was consistent. */
function setUp() {
  let now = START;
  const client: { status: ClientStatus } = {
    status: {
      enabled: false,
      revokedBefore: 0,
      secretIds: new Set(['s1']),
      revokedTokens: new Set(),
    },
  };
  const user: { status: UserStatus } = {
    status: { enabled: false, revokedBefore: 0, revokedSessions: new Set() },
  };
  const connection: { status: { connectionId: string } | null } = { status: { connectionId: 'con_1' } };
  const reads: { kind: string; consistent: boolean }[] = [];
  const sleeps: number[] = [];
  const record = (kind: string, options: StatusReadOptions | undefined) =>
    reads.push({ kind, consistent: options?.consistent === true });
  const check = createRevocationCheck({
    connections: {
      async findConnectionStatus(_clientId, _customerId, options) {
        record('connection', options);
        return connection.status;
      },
    },
    clients: {
      async findClientStatus(_clientId, options) {
        record('client', options);
        return client.status;
      },
    },
    users: {
      async findStatus(_username, options) {
        record('user', options);
        return user.status;
      },
    },
    cacheTtlMs: 30_000,
    clock: () => new Date(now),
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    metrics: noMetrics,
  });
  return {
    sleeps,
    check,
    client,
    user,
    connection,
    reads,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

const clientToken = (issuedAt: number, secretId = 's1'): AccessClaims =>
  ({
    kind: 'client',
    clientId: 'pcl_00000000000000000001',
    customerId: 'C-1',
    grant: { secretId },
    jti: `jti-${issuedAt}-${secretId}`,
    issuedAt,
    expiresAt: issuedAt + 3600,
    scopes: ['tracking:read'],
  }) as unknown as AccessClaims;

const userToken = (issuedAt: number): AccessClaims =>
  ({
    kind: 'user',
    username: 'alice',
    customerId: 'C-1',
    sessionId: 'session-1',
    jti: `jti-${issuedAt}`,
    issuedAt,
    expiresAt: issuedAt + 3600,
    scopes: ['tracking:read'],
  }) as unknown as AccessClaims;

describe('the revocation check’s cache', () => {
  it('reads a client’s state again, strongly consistent, for a token issued after the cached state refused it', async () => {
    const { check, client, reads, advance, now } = setUp();
    const before = clientToken(seconds(now()) - 60);
    expect(await check.isRevoked(before)).toBe(true);

    // Enabled again, and a token granted a moment later: the cached refusal predates it.
    advance(400);
    client.status = { ...client.status, enabled: true };
    expect(await check.isRevoked(clientToken(seconds(now())))).toBe(false);
    expect(reads).toEqual([
      { kind: 'client', consistent: false },
      { kind: 'client', consistent: true },
    ]);
  });

  it('confirms, strongly consistent, a first read’s refusal of a token issued within the read’s lag', async () => {
    const { client, reads, now } = setUp();
    // The client was enabled a moment ago; the eventually consistent read still says disabled.
    const lagging = { ...client.status };
    client.status = { ...client.status, enabled: true };
    const laggingCheck = createRevocationCheck({
      connections: noConnections,
      clients: {
        async findClientStatus(_clientId, options) {
          reads.push({ kind: 'client', consistent: options?.consistent === true });
          return options?.consistent === true ? client.status : lagging;
        },
      },
      users: { findStatus: async () => null },
      cacheTtlMs: 30_000,
      clock: () => new Date(now()),
      metrics: noMetrics,
    });
    expect(await laggingCheck.isRevoked(clientToken(seconds(now()) - 1))).toBe(false);
    expect(reads).toEqual([
      { kind: 'client', consistent: false },
      { kind: 'client', consistent: true },
    ]);
  });

  it('takes a secret added since the cached read for a token granted with it', async () => {
    const { check, client, reads, advance, now } = setUp();
    client.status = { ...client.status, enabled: true };
    expect(await check.isRevoked(clientToken(seconds(now()) - 60))).toBe(false);
    advance(5_000);
    client.status = { ...client.status, secretIds: new Set(['s1', 's2']) };
    expect(await check.isRevoked(clientToken(seconds(now()), 's2'))).toBe(false);
    expect(reads.map((read) => read.consistent)).toEqual([false, true]);
  });

  it('reads a user’s state again for a token of a login after the user was enabled again', async () => {
    const { check, user, reads, advance, now } = setUp();
    expect(await check.isRevoked(userToken(seconds(now()) - 60))).toBe(true);
    advance(2_000);
    user.status = { ...user.status, enabled: true };
    expect(await check.isRevoked(userToken(seconds(now())))).toBe(false);
    expect(reads.map((read) => read.kind)).toEqual(['user', 'user']);
  });

  it('trusts the cached refusal for a token issued before the read, and reads no more', async () => {
    const { check, client, reads, advance, now } = setUp();
    const before = clientToken(seconds(now()) - 60);
    expect(await check.isRevoked(before)).toBe(true);
    advance(1_000);
    client.status = { ...client.status, enabled: true };
    // Within the revocation bound a revoked token may pass, never the reverse: this one stays refused.
    expect(await check.isRevoked(before)).toBe(true);
    expect(reads).toHaveLength(1);
  });

  it('reads a refused fresh token’s state again at most once per REREAD_INTERVAL_MS in its second, and once past it', async () => {
    const { check, reads, sleeps, advance, now } = setUp();
    expect(await check.isRevoked(clientToken(seconds(now()) - 60))).toBe(true);
    advance(1_500);
    const fresh = clientToken(seconds(now()));
    expect(await check.isRevoked(fresh)).toBe(true);
    expect(reads).toHaveLength(2);
    // Presented again and again in the second of that read: one read per REREAD_INTERVAL_MS.
    for (let call = 0; call < 20 && now() < START + 2_000; call += 1) {
      expect(await Promise.all([check.isRevoked(fresh), check.isRevoked(fresh)])).toEqual([true, true]);
    }
    expect(sleeps.every((ms) => ms > 0 && ms <= REREAD_INTERVAL_MS)).toBe(true);
    expect(reads.length).toBeLessThanOrEqual(2 + 1_000 / REREAD_INTERVAL_MS + 1);
    // A read of a later second settles the token for the cache's life.
    const settled = reads.length;
    advance(1_000);
    for (let call = 0; call < 5; call += 1) expect(await check.isRevoked(fresh)).toBe(true);
    expect(reads.length).toBeLessThanOrEqual(settled + 1);
    expect(reads.every((read, index) => read.consistent === index > 0)).toBe(true);
  });

  it('allows a token granted in the second of a read again that refused, once the client is enabled', async () => {
    const { check, client, reads, advance, now } = setUp();
    expect(await check.isRevoked(clientToken(seconds(now()) - 60))).toBe(true);
    advance(1_200);
    // A token of the second before the enable: read again, still disabled.
    expect(await check.isRevoked(clientToken(seconds(now())))).toBe(true);
    advance(30);
    client.status = { ...client.status, enabled: true };
    // Granted after the enable, in the same second as the read again that said disabled.
    expect(await check.isRevoked(clientToken(seconds(now()), 's1'))).toBe(false);
    expect(reads.map((read) => read.consistent)).toEqual([false, true, true]);
  });

  it('shares one read again among concurrent checks of fresh tokens', async () => {
    const { check, client, reads, advance, now } = setUp();
    expect(await check.isRevoked(clientToken(seconds(now()) - 60))).toBe(true);
    advance(1_500);
    client.status = { ...client.status, enabled: true };
    const fresh = [clientToken(seconds(now())), clientToken(seconds(now()), 's1')];
    expect(await Promise.all(fresh.map((claims) => check.isRevoked(claims)))).toEqual([false, false]);
    expect(reads).toHaveLength(2);
  });

  it('answers an allowed token from the cache, whenever it was issued: the hot path reads nothing more', async () => {
    const { check, client, reads, advance, now } = setUp();
    client.status = { ...client.status, enabled: true };
    expect(await check.isRevoked(clientToken(seconds(now()) - 60))).toBe(false);
    advance(10_000);
    expect(await check.isRevoked(clientToken(seconds(now())))).toBe(false);
    expect(reads).toHaveLength(1);
  });
});

describe('a platform’s token of a connection', () => {
  const connectionToken = (issuedAt: number, connectionId = 'con_1'): AccessClaims =>
    ({
      kind: 'client',
      clientId: 'pcl_00000000000000000001',
      customerId: 'C-1',
      grant: { connectionId },
      jti: `jti-${issuedAt}-${connectionId}`,
      issuer: 'https://auth.example/test',
      audience: 'https://api.example/test',
      issuedAt,
      expiresAt: issuedAt + 3600,
      scopes: ['tracking:read'],
    }) as AccessClaims;

  it('is refused once its connection is gone or is a later approval’s, and its platform is read beside', async () => {
    const { check, client, connection, reads, advance } = setUp();
    client.status = { ...client.status, enabled: true, secretIds: new Set() };
    const issued = seconds(START) - 10;
    expect(await check.isRevoked(connectionToken(issued)), 'a live connection, no secret asked for').toBe(
      false,
    );
    expect(reads.map((read) => read.kind).sort()).toEqual(['client', 'connection']);
    connection.status = { connectionId: 'con_2' };
    advance(31_000);
    expect(await check.isRevoked(connectionToken(issued)), 'another approval’s now').toBe(true);
    connection.status = null;
    advance(31_000);
    expect(await check.isRevoked(connectionToken(issued)), 'ended').toBe(true);
    connection.status = { connectionId: 'con_1' };
    client.status = { ...client.status, enabled: false };
    advance(31_000);
    expect(await check.isRevoked(connectionToken(issued)), 'its platform disabled').toBe(true);
  });
});
