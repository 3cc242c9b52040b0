/**
 * Passkeys in the API's fault matrix (docs/FAULTS.md, "The API"): an administrator registers a
 * passkey, and a passkey signs in, while each DynamoDB call of the function fails in turn. The
 * browser's answers are @simplewebauthn/server's own test vectors (tests/unit/webauthn.test.ts),
 * served on their hosts. Whatever fails, nothing is half-made: a passkey is stored whole or not
 * at all, an answered registration is a passkey that is listed, an answered sign-in a session of
 * the passkey's user whose tokens say so, and a challenge is never spent twice.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { decodeJwt } from 'jose';
import { expect } from 'vitest';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import { createDynamoAuditTrail } from '../../../lib/audit/dynamodb.ts';
import {
  createDynamoChallengeStore,
  createDynamoPasskeyStore,
  handleKey,
} from '../../../lib/passkeys/dynamodb.ts';
import { ADMIN_SCOPE } from '../../../lib/scopes.ts';
import { gatewayAuthorizerContext, loginEvent } from '../../fixtures/events.ts';
import { customerApiEvent } from '../../support/customer-api.ts';
import type { TestDynamo } from '../../support/dynamo.ts';
import type { CapturedLogs } from '../../support/log-capture.ts';
import { type Answer, call, decide, freshHandler, json, type Operation, type Run } from './api-bench.ts';

/** What the passkey operations take from the API's matrix. */
export interface PasskeyBench {
  dynamo(): TestDynamo;
  readonly logs: CapturedLogs;
  /** A new user of a new customer, the address it logs in from, and its login with the right password. */
  newUser(): Promise<{ username: string; customerId: string; sourceIp: string; login: unknown }>;
}

/** A "none" attestation made with user verification, on https://dev.dontneeda.pw. */
const REGISTRATION = {
  id: 'AdKXJEch1aV5Wo7bj7qLHskVY4OoNaj9qu8TPdJ7kSAgUeRxWNngXlcNIGt4gexZGKVGcqZpqqWordXb_he1izY',
  rawId: 'AdKXJEch1aV5Wo7bj7qLHskVY4OoNaj9qu8TPdJ7kSAgUeRxWNngXlcNIGt4gexZGKVGcqZpqqWordXb_he1izY',
  response: {
    attestationObject:
      'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjFPdxHEOnAiLIp26idVjIguzn3I' +
      'pr_RlsKZWsa-5qK-KBFAAAAAAAAAAAAAAAAAAAAAAAAAAAAQQHSlyRHIdWleVqO24-6ix7JFWODqDWo_arvEz3Se' +
      '5EgIFHkcVjZ4F5XDSBreIHsWRilRnKmaaqlqK3V2_4XtYs2pQECAyYgASFYID5PQTZQQg6haZFQWFzqfAOyQ_ENs' +
      'MH8xxQ4GRiNPsqrIlggU8IVUOV8qpgk_Jh-OTaLuZL52KdX1fTht07X4DiQPow',
    clientDataJSON:
      'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiYUVWalkxQlhkWHBw' +
      'VURBd1NEQndOV2Q0YURKZmRUVmZVRU0wVG1WWloyUSIsIm9yaWdpbiI6Imh0dHBzOlwvXC9kZXYuZG9udG5lZWRh' +
      'LnB3IiwiYW5kcm9pZFBhY2thZ2VOYW1lIjoib3JnLm1vemlsbGEuZmlyZWZveCJ9',
    transports: [],
  },
  type: 'public-key',
  clientExtensionResults: {},
};
const REGISTRATION_CHALLENGE = Buffer.from('hEccPWuziP00H0p5gxh2_u5_PC4NeYgd').toString('base64url');

/** An assertion made with user verification, on http://localhost:8000, for the user handle `internalUserId`. */
const ASSERTION = {
  id: 'AaIBxnYfL2pDWJmIii6CYgHBruhVvFGHheWamphVioG_TnEXxKA9MW4FWnJh21zsbmRpRJso9i2JmAtWOtXfVd4oXTgYVusXwhWWsA',
  rawId:
    'AaIBxnYfL2pDWJmIii6CYgHBruhVvFGHheWamphVioG_TnEXxKA9MW4FWnJh21zsbmRpRJso9i2JmAtWOtXfVd4oXTgYVusXwhWWsA',
  response: {
    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFYftypQ',
    clientDataJSON:
      'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiZXlKaFkzUjFZV3hEYUdGc2JHVnVaMlVpT2lKTE0xRjRUMnB1VmtwTWFVZHNibFpGY0RWMllUVlJTbVZOVmxkT1psODNVRmxuZFhSbllrRjBRVlZCSWl3aVlYSmlhWFJ5WVhKNVJHRjBZU0k2SW5OcFoyNU5aVkJzWldGelpTSjkiLCJvcmlnaW4iOiJodHRwOi8vbG9jYWxob3N0OjgwMDAiLCJjcm9zc09yaWdpbiI6ZmFsc2V9',
    signature:
      'MEUCIByFAVGfkoKPEzynp-37BX_HOXSaC6-58-ELjB7BG9opAiEAyD_1mN9YAPrphcwpzK3ym2Xx8EjAapgQ326mKgQ1pW0',
    userHandle: 'internalUserId',
  },
  type: 'public-key',
  clientExtensionResults: {},
};
const ASSERTION_CHALLENGE =
  'eyJhY3R1YWxDaGFsbGVuZ2UiOiJLM1F4T2puVkpMaUdsblZFcDV2YTVRSmVNVldOZl83UFlndXRnYkF0QVVBIiwiYXJiaXRyYXJ5RGF0YSI6InNpZ25NZVBsZWFzZSJ9';
const ASSERTION_KEY =
  'pQECAyYgASFYILTrxTUQv3X4DRM6L_pk65FSMebenhCx3RMsTKoBm-AxIlggEf3qk5552QLNSh1T1oQs7_2C2qysDwN4r4fCp52Hsqs';
const ASSERTION_COUNTER = 0x61fb72a5;

/** The challenge's spend: from its write on, a second request finds it spent. */
const SPEND = 'UpdateItem sessions:webauthn';

/** Whether a run's first request got as far as spending its challenge (a retry is then refused). */
const spent = (run: Run, site: string | undefined, before: readonly string[]) =>
  site !== undefined && !before.includes(site) && !(site === SPEND && run.kind !== 'lost');

/** The answers of a run with `status`: the first, and the retry after a 503. */
const answered = (run: Run, status: number) =>
  [run.first, run.retry].filter((answer): answer is Answer => answer?.status === status);

// biome-ignore lint/suspicious/noExplicitAny: each operation's context type is its own
export function passkeyOperations(bench: PasskeyBench): Operation<any>[] {
  const table = () => ({ client: bench.dynamo().documentClient, tableName: bench.dynamo().tables.accounts });
  const challenges = () =>
    createDynamoChallengeStore({
      client: bench.dynamo().documentClient,
      tableName: bench.dynamo().tables.sessions,
    });
  const inFiveMinutes = () => Math.floor(Date.now() / 1000) + 300;

  /** A new customer's administrator, signed in a moment ago, as the authorizer lets them through. */
  async function newAdministrator() {
    const { username, customerId, sourceIp, login } = await bench.newUser();
    await createDynamoAccountRepository(table()).setAdministrator(username, true);
    const answer = await call(await freshHandler('login'), login);
    if (answer.status !== 200)
      throw new Error(`arrange: the administrator's login answered ${answer.status}`);
    const decision = await decide(await freshHandler('authorizer'), json(answer).token as string);
    if (
      !String(decision.context?.scope ?? '')
        .split(' ')
        .includes(ADMIN_SCOPE)
    )
      throw new Error(`arrange: the administrator's token holds no ${ADMIN_SCOPE}`);
    return { username, customerId, sourceIp, authorizer: gatewayAuthorizerContext(decision) };
  }
  type Admin = Awaited<ReturnType<typeof newAdministrator>>;

  /** The registration's request, on the vector's host. */
  const registration = (admin: Admin) => {
    const event = customerApiEvent(admin, 'POST', '/api/v1/customer/passkeys', {
      body: { name: 'Laptop', response: REGISTRATION },
    });
    return { ...event, requestContext: { ...event.requestContext, domainName: 'dev.dontneeda.pw' } };
  };

  const registerPasskey: Operation<Admin> = {
    name: 'administrator registers a passkey',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      // The options' challenge, as POST /customer/passkeys/options stores it.
      await challenges().create(
        REGISTRATION_CHALLENGE,
        { kind: 'registration', username: admin.username },
        inFiveMinutes(),
      );
      return admin;
    },
    act: async (admin, handler) => call(await handler('customer-api'), registration(admin)),
    success: 201,
    // Answered from the passkey written: the trail's write is the last, and its failure a warning.
    outlived: ['PutItem audit:'],
    // Past the challenge's spend, the retry answers the same challenge again: "start again".
    ownRefusal: (run, site) =>
      spent(run, site, ['GetItem accounts:USER/sk', 'GetItem accounts:CUSTOMER/sk']) ? 400 : undefined,
    async check(admin, run) {
      const stored = await createDynamoPasskeyStore(table()).list(admin.username);
      // Whole or not at all: the vector's key, the name given, and no second one.
      expect(stored.length, 'passkeys stored').toBeLessThanOrEqual(1);
      for (const passkey of stored)
        expect(passkey, 'a passkey whole').toMatchObject({
          passkeyId: REGISTRATION.id,
          name: 'Laptop',
          publicKey:
            'pQECAyYgASFYID5PQTZQQg6haZFQWFzqfAOyQ_ENsMH8xxQ4GRiNPsqrIlggU8IVUOV8qpgk_Jh-OTaLuZL52KdX1fTht07X4DiQPow',
          counter: 0,
        });
      if (answered(run, 201).length > 0) expect(stored, 'an answered registration is stored').toHaveLength(1);
      // What is stored is listed, and is in the trail or the warning that it is not.
      if (stored.length === 1) {
        const { events } = await createDynamoAuditTrail({
          client: bench.dynamo().documentClient,
          tableName: bench.dynamo().tables.audit,
        }).list({ customerId: admin.customerId, limit: 100 });
        const recorded = events.some(
          (event) => event.type === 'passkey.registered' && event.passkeyId === REGISTRATION.id,
        );
        const warned = bench.logs
          .events('audit event not recorded')
          .some((line) => line.type === 'passkey.registered');
        // The documented gap: the passkey written, its answer lost, the call ends before the trail.
        const gap = run.kind === 'lost' && run.first.status === 503 && answered(run, 201).length === 0;
        expect(recorded || warned || gap, 'the registration in the trail, or the warning it is not').toBe(
          true,
        );
      }
    },
  };

  /** The sign-in's request, on the vector's host. */
  const signIn = () => {
    const event = loginEvent(JSON.stringify({ response: ASSERTION }), { 'X-Forwarded-Proto': 'http' });
    return {
      ...event,
      path: '/api/v1/passkey-login',
      resource: '/api/v1/passkey-login',
      requestContext: { ...event.requestContext, domainName: 'localhost:8000' },
    };
  };

  const passkeySignIn: Operation<{ username: string }> = {
    name: 'a passkey signs in',
    function: 'passkey-login',
    async arrange() {
      const { username } = await bench.newUser();
      // The vector's user handle is this user's (each run's in turn), its passkey the vector's.
      await bench.dynamo().documentClient.send(
        new PutCommand({
          TableName: bench.dynamo().tables.accounts,
          Item: { ...handleKey(ASSERTION.response.userHandle), username },
        }),
      );
      await createDynamoPasskeyStore(table()).add({
        passkeyId: ASSERTION.id,
        username,
        name: 'Laptop',
        publicKey: ASSERTION_KEY,
        counter: 0,
        transports: ['internal'],
        backedUp: false,
        createdAt: new Date().toISOString(),
      });
      await challenges().create(ASSERTION_CHALLENGE, { kind: 'sign-in' }, inFiveMinutes());
      return { username };
    },
    act: async (_context, handler) => call(await handler('passkey-login'), signIn()),
    success: 200,
    // Past the challenge's spend, the retry answers it again: the one 401.
    ownRefusal: (run, site) => (spent(run, site, []) ? 401 : undefined),
    async check({ username }, run) {
      const [passkey] = await createDynamoPasskeyStore(table()).list(username);
      const signedIn = answered(run, 200);
      for (const answer of signedIn) {
        const body = JSON.parse(answer.body) as { token: string; refreshToken: string; userName: string };
        expect(body.userName, 'the passkey’s user').toBe(username);
        expect(decodeJwt(body.token), 'its tokens say a passkey signed in').toMatchObject({
          sub: username,
          acr: 'phr',
        });
      }
      // A sign-in answered moved the counter; one refused moved it or not, never back.
      if (signedIn.length > 0) expect(passkey?.counter, 'the counter recorded').toBe(ASSERTION_COUNTER);
      else expect([0, ASSERTION_COUNTER], 'the counter').toContain(passkey?.counter);
      // The challenge is spent, whatever the run: a third answer to it is refused.
      expect(
        await challenges().spend(ASSERTION_CHALLENGE, 'after the run', new Date()),
        'the challenge',
      ).toBeNull();
    },
  };

  return [registerPasskey, passkeySignIn];
}
