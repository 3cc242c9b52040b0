/**
 * Passkeys on dynalite (lib/passkeys/dynamodb.ts, lib/auth/passkey-login.ts): the items, the
 * challenges' single use, and a sign-in with @simplewebauthn/server's own localhost assertion
 * (tests/unit/webauthn.test.ts has the vector's origin), the real session store and signing:
 * nothing signed by the code under test.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { type PasskeyLoginDeps, passkeyLogin } from '../../lib/auth/passkey-login.ts';
import type { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import {
  createDynamoChallengeStore,
  createDynamoPasskeyStore,
  handleKey,
} from '../../lib/passkeys/dynamodb.ts';
import type { Passkey } from '../../lib/passkeys/store.ts';
import { relyingPartyOf } from '../../lib/passkeys/webauthn.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import { ASSERTION, ASSERTION_CHALLENGE, ASSERTION_COUNTER, ASSERTION_KEY } from '../fixtures/webauthn.ts';
import { startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { createMemoryMetrics } from '../support/memory-metrics.ts';

const CHALLENGE = ASSERTION_CHALLENGE;
const PUBLIC_KEY = ASSERTION_KEY;
const RP = relyingPartyOf('http://localhost:8000');

let dynamo: TestDynamo;
let deps: PasskeyLoginDeps;
let logs: Record<string, unknown>[];
let metrics: ReturnType<typeof createMemoryMetrics>;
let accounts: { client: TestDynamo['documentClient']; tableName: string };
let now: Date;
let users = 0;

const passkeys = () => createDynamoPasskeyStore(accounts);
const challenges = () =>
  createDynamoChallengeStore({ client: dynamo.documentClient, tableName: dynamo.tables.sessions });
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: AppError) => error.code,
  );

/** A user whose passkey the assertion's credential is, under the assertion's user handle. */
async function userWithTheVectorsPasskey(overrides: Partial<Passkey> = {}) {
  const username = `admin-${++users}`;
  await createDynamoAccountRepository(accounts).createUser({
    username,
    passwordHash: '$2b$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinv',
    customerId: 'C-PASSKEYS',
  });
  await dynamo.documentClient.send(
    new PutCommand({
      TableName: accounts.tableName,
      Item: { ...handleKey(ASSERTION.response.userHandle), username },
    }),
  );
  await passkeys().add({
    passkeyId: ASSERTION.id,
    username,
    name: 'Laptop',
    publicKey: PUBLIC_KEY,
    counter: 0,
    transports: ['internal'],
    backedUp: false,
    createdAt: now.toISOString(),
    ...overrides,
  });
  return username;
}

beforeAll(async () => {
  dynamo = await startTestDynamo();
  accounts = { client: dynamo.documentClient, tableName: dynamo.tables.accounts };
  const keys = await testKeys();
  deps = {
    users: createDynamoAccountRepository(accounts),
    passkeys: passkeys(),
    challenges: challenges(),
    sessions: {
      store: createDynamoSessionStore({ client: dynamo.documentClient, tableName: dynamo.tables.sessions }),
      tokens: createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }),
      settings: { maxLifetimeSeconds: 90 * 86_400, reuseGraceSeconds: 0 },
      clock: () => now,
    },
    logger: createLogger('info', (line) => logs.push(JSON.parse(line))),
    get metrics() {
      return metrics;
    },
  };
});
afterAll(() => dynamo?.close());
beforeEach(() => {
  now = new Date();
  logs = [];
  metrics = createMemoryMetrics();
});

describe('a passkey sign-in', () => {
  it('starts a session of the passkey’s user whose tokens say a passkey signed in, and records the use', async () => {
    const username = await userWithTheVectorsPasskey();
    await challenges().create(CHALLENGE, { kind: 'sign-in' }, Math.floor(now.getTime() / 1000) + 300);

    const { user, tokens } = await passkeyLogin(deps, RP, { response: ASSERTION }, '203.0.113.9');
    expect(user.username).toBe(username);
    for (const token of [tokens.accessToken, tokens.refreshToken])
      expect(decodeJwt(token)).toMatchObject({ sub: username, amr: ['pop', 'mfa'], acr: 'phr' });
    const [stored] = await passkeys().list(username);
    expect(stored).toMatchObject({ counter: ASSERTION_COUNTER, lastUsedAt: now.toISOString() });
    expect(metrics.events).toContainEqual({ name: 'LoginSucceeded' });
    await passkeys().remove(username, ASSERTION.id);
  });

  it('spends its challenge: the same answer again, a challenge never issued and one expired are one 401', async () => {
    const username = await userWithTheVectorsPasskey();
    await challenges().create(CHALLENGE, { kind: 'sign-in' }, Math.floor(now.getTime() / 1000) + 300);
    await passkeyLogin(deps, RP, { response: ASSERTION }, '203.0.113.9');
    await expect(codeOf(passkeyLogin(deps, RP, { response: ASSERTION }, '203.0.113.9'))).resolves.toBe(
      'INVALID_CREDENTIALS',
    );
    await challenges().create(CHALLENGE, { kind: 'sign-in' }, Math.floor(now.getTime() / 1000) - 1);
    await expect(codeOf(passkeyLogin(deps, RP, { response: ASSERTION }, '203.0.113.9'))).resolves.toBe(
      'INVALID_CREDENTIALS',
    );
    expect(logs.filter((line) => line.message === 'login failed').map((line) => line.reason)).toEqual([
      'challenge unknown, expired or spent',
      'challenge unknown, expired or spent',
    ]);
    await passkeys().remove(username, ASSERTION.id);
  });

  it('refuses, and logs as a possible clone, an assertion whose signature counter did not grow', async () => {
    const username = await userWithTheVectorsPasskey({ counter: ASSERTION_COUNTER });
    await challenges().create(CHALLENGE, { kind: 'sign-in' }, Math.floor(now.getTime() / 1000) + 300);
    await expect(codeOf(passkeyLogin(deps, RP, { response: ASSERTION }, '203.0.113.9'))).resolves.toBe(
      'INVALID_CREDENTIALS',
    );
    expect(logs.find((line) => String(line.message).includes('cloned'))).toMatchObject({
      level: 'WARN',
      username,
      passkeyId: ASSERTION.id,
    });
    expect(metrics.events).toContainEqual({ name: 'LoginFailed', reason: 'Passkey' });
    await passkeys().remove(username, ASSERTION.id);
  });

  it('refuses a passkey of a disabled user, a removed one, and another origin’s answer, changing nothing', async () => {
    const username = await userWithTheVectorsPasskey();
    const issue = () =>
      challenges().create(CHALLENGE, { kind: 'sign-in' }, Math.floor(now.getTime() / 1000) + 300);
    await issue();
    await expect(
      codeOf(passkeyLogin(deps, relyingPartyOf('http://localhost:8001'), { response: ASSERTION }, '')),
    ).resolves.toBe('INVALID_CREDENTIALS');
    await createDynamoAccountRepository(accounts).setEnabled(username, false);
    await issue();
    await expect(codeOf(passkeyLogin(deps, RP, { response: ASSERTION }, ''))).resolves.toBe(
      'INVALID_CREDENTIALS',
    );
    await createDynamoAccountRepository(accounts).setEnabled(username, true);
    expect((await passkeys().list(username))[0]?.counter).toBe(0);
    await passkeys().remove(username, ASSERTION.id);
    await issue();
    await expect(codeOf(passkeyLogin(deps, RP, { response: ASSERTION }, ''))).resolves.toBe(
      'INVALID_CREDENTIALS',
    );
    expect(logs.filter((line) => line.message === 'login failed').map((line) => line.reason)).toEqual([
      expect.stringMatching(/origin/),
      'user unknown or disabled',
      'unknown passkey',
    ]);
  });
});

describe('the passkey items', () => {
  it('give a user one handle, made on first use, that finds the user’s passkeys and no one else’s', async () => {
    const repository = createDynamoAccountRepository(accounts);
    await repository.createUser({ username: 'Handles', passwordHash: 'x', customerId: 'C-PASSKEYS' });
    const handle = await passkeys().userHandle('Handles');
    expect(handle).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(passkeys().userHandle('Handles')).resolves.toBe(handle);
    // Another spelling of a folded name is no user of that name.
    await expect(passkeys().userHandle('handles')).resolves.toBeNull();
    const passkey = { ...basePasskey('Handles'), passkeyId: 'AAAAAAAAAAAAAAAAAAAAAA' };
    await expect(passkeys().add(passkey)).resolves.toBe(true);
    // The same write sent again (its answer lost) is that registration; another of the same passkey is not.
    await expect(passkeys().add(passkey)).resolves.toBe(true);
    await expect(
      passkeys().add({ ...passkey, createdAt: new Date(now.getTime() + 1).toISOString() }),
    ).resolves.toBe(false);
    await expect(passkeys().findByHandle(handle ?? '', passkey.passkeyId)).resolves.toEqual(passkey);
    await expect(passkeys().findByHandle('bm8gc3VjaCBoYW5kbGU', passkey.passkeyId)).resolves.toBeNull();
    await expect(passkeys().list('handles')).resolves.toEqual([]);
    await expect(passkeys().remove('handles', passkey.passkeyId)).resolves.toBe(false);
  });

  it('move a counter only from the value read: of two uses of one value, one wins', async () => {
    const repository = createDynamoAccountRepository(accounts);
    await repository.createUser({ username: 'counter-user', passwordHash: 'x', customerId: 'C-PASSKEYS' });
    const passkey = { ...basePasskey('counter-user'), counter: 5 };
    await passkeys().add(passkey);
    const uses = await Promise.all(
      [6, 7].map((to) => passkeys().recordUse(passkey, { to, at: now.toISOString() })),
    );
    expect(uses.filter(Boolean)).toHaveLength(1);
  });

  it('go with their user: removing the user removes its passkeys and its handle, so a new user of the name inherits none', async () => {
    const repository = createDynamoAccountRepository(accounts);
    await repository.createUser({ username: 'leaver', passwordHash: 'x', customerId: 'C-PASSKEYS' });
    const handle = (await passkeys().userHandle('leaver')) ?? '';
    await passkeys().add(basePasskey('leaver'));
    await repository.removeUser('leaver');
    await repository.createUser({ username: 'leaver', passwordHash: 'x', customerId: 'C-PASSKEYS' });
    await expect(passkeys().list('leaver')).resolves.toEqual([]);
    await expect(passkeys().findByHandle(handle, basePasskey('leaver').passkeyId)).resolves.toBeNull();
    await expect(passkeys().userHandle('leaver')).resolves.not.toBe(handle);
  });
});

describe('a challenge', () => {
  it('is spent once: its own request sent again is that use, any other is refused', async () => {
    const store = challenges();
    await store.create(
      'c2luZ2xlLXVzZS1jaGFsbGVuZ2U',
      { kind: 'registration', username: 'alice' },
      Math.floor(now.getTime() / 1000) + 300,
    );
    await expect(store.spend('c2luZ2xlLXVzZS1jaGFsbGVuZ2U', 'request-1', now)).resolves.toEqual({
      kind: 'registration',
      username: 'alice',
    });
    await expect(store.spend('c2luZ2xlLXVzZS1jaGFsbGVuZ2U', 'request-1', now)).resolves.toEqual({
      kind: 'registration',
      username: 'alice',
    });
    await expect(store.spend('c2luZ2xlLXVzZS1jaGFsbGVuZ2U', 'request-2', now)).resolves.toBeNull();
    await expect(store.spend('bmV2ZXItaXNzdWVkLWNoYWxsZW5nZQ', 'request-3', now)).resolves.toBeNull();
  });

  it('expires after its five minutes', async () => {
    const store = challenges();
    await store.create(
      'ZXhwaXJpbmctY2hhbGxlbmdl',
      { kind: 'sign-in' },
      Math.floor(now.getTime() / 1000) + 300,
    );
    await expect(
      store.spend('ZXhwaXJpbmctY2hhbGxlbmdl', 'r', new Date(now.getTime() + 300_000)),
    ).resolves.toBeNull();
  });
});

function basePasskey(username: string): Passkey {
  return {
    passkeyId: 'cGFzc2tleS1vZi10aGUtdXNlcg',
    username,
    name: 'Phone',
    publicKey: PUBLIC_KEY,
    counter: 0,
    transports: ['hybrid', 'internal'],
    backedUp: true,
    createdAt: now.toISOString(),
  };
}
