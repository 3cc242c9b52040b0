/**
 * The self-service API's operations in the API's fault matrix (docs/FAULTS.md, invariants 11
 * and 12): an administrator, signed in by a real login and let through by the real
 * authorizer, changes the customer's clients while each DynamoDB call of `customer-api` fails
 * in turn. Whatever fails, no client or secret is left that the administrator never saw and
 * the console cannot show and remove, and each change is in the audit trail or the warning
 * that it is not is in the log.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import type { AuditEvent } from '../../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../../lib/audit/dynamodb.ts';
import { hashPassword } from '../../../lib/auth/passwords.ts';
import { createDynamoClientRepository } from '../../../lib/clients/dynamodb.ts';
import { isLive } from '../../../lib/clients/secrets.ts';
import { readLoginConfig } from '../../../lib/config.ts';
import { ENDING_HOLD_MS } from '../../../lib/customer/administrators.ts';
import {
  clientCounterKey,
  clientSourceIpCounterKey,
  knownSourceCounterKey,
  knownSourceTag,
} from '../../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../../lib/throttle/dynamodb.ts';
import { grantEvent } from '../../fixtures/events.ts';
import {
  ADMINISTRATORS,
  CLIENT,
  CLIENTS,
  type CustomerApiOptions,
  customerApiEvent,
  EVENTS,
  REVOKE,
  SECRET,
  SECRETS,
  UNLOCK,
} from '../../support/customer-api.ts';
import type { TestDynamo } from '../../support/dynamo.ts';
import type { CapturedLogs } from '../../support/log-capture.ts';
import {
  type Answer,
  authorize,
  call,
  freshHandler,
  json,
  type Operation,
  type Run,
  type SignedInAdministrator,
  signedInAdministrator,
} from './api-bench.ts';

/** What the self-service operations take from the API's matrix. */
export interface SelfServiceBench {
  /** The DynamoDB behind the proxy, read and written here without faults. */
  dynamo(): TestDynamo;
  /** The functions' log lines of the running test. */
  readonly logs: CapturedLogs;
  /** A new user of a new customer, the address it logs in from, and its login with the right password. */
  newUser(): Promise<{ username: string; customerId: string; sourceIp: string; login: unknown }>;
  /** An address of a run's own from which strangers guess. */
  strangerAddress(): string;
  /** The secret the functions key the failed-authentication counters with. */
  counterSecret(): Uint8Array;
}

const NEW_CLIENT = { name: 'Warehouse', scopes: ['tracking:read'] };
/** A roll's `expireOthersInSeconds`: the other secret stops an hour later, long after the run. */
const ROLL_SECONDS = 3600;

/** The change's own write, per operation: where an applied write whose answer was lost ends the call. */
const CREATE_WRITE = 'PutItem accounts:CLIENT/sk';
/** A grant's write: after the caller's read and the user's. */
const GRANT_WRITE = 'UpdateItem accounts:USER/sk';
/**
 * An end's writes after its mark: the end on condition of the mark, in the revocation cutoff's
 * one or two tries (the second when the first finds the cutoff at this second already).
 */
const END_WRITES = ['UpdateItem accounts:USER/sk #2', 'UpdateItem accounts:USER/sk #3'];
const UPDATE_WRITE = 'UpdateItem accounts:CLIENT/sk';
const DELETE_WRITE = 'DeleteItem accounts:CLIENT/sk';

/** Locks that outlast any run, as api.test.ts's: a run sees the lock it arranged. */
const LONG_LOCKS = { LOGIN_LOCKOUT_BASE: '15m' };

interface SecretView {
  readonly secretId: string;
  readonly expiresAt: string | null;
}
interface ClientView {
  readonly clientId: string;
  readonly name: string | null;
  readonly scopes: string[];
  readonly enabled: boolean;
  readonly secrets: SecretView[];
}
/** A new client's or secret's answer: the secret, shown this once. */
interface Created {
  readonly client: ClientView;
  readonly secretId: string;
  readonly clientSecret: string;
}
interface EventView {
  readonly type: string;
  readonly clientId?: string;
  readonly actor: string;
  readonly sourceIp: string | null;
}
const bodyOf = <T>(answer: Answer) => JSON.parse(answer.body) as T;

type Admin = SignedInAdministrator;

/** A client made through the API, the secret it showed, and the address it authenticates from. */
interface MadeClient {
  readonly clientId: string;
  readonly secretId: string;
  readonly secret: string;
  readonly sourceIp: string;
}

/** The answers of a run with `status`: the first, and the retry after a 503. */
const answered = (run: Run, status: number) =>
  [run.first, run.retry].filter((answer): answer is Answer => answer?.status === status);

/**
 * The documented gap (docs/FAULTS.md): the change's own write applied, its answer lost, the
 * call ends in a 503 before the change is recorded, and nothing records it afterwards.
 */
const unrecorded = (run: Run, site: string | undefined, write: string) =>
  run.kind === 'lost' && site === write;

let colleagues = 0;
let clients = 0;
/** An address of a client's own: its failed authentications add up on no other run's counter. */
const clientAddress = () => {
  clients += 1;
  return `10.5.${Math.floor(clients / 250)}.${(clients % 250) + 1}`;
};

// biome-ignore lint/suspicious/noExplicitAny: each operation's context type is its own
export function selfServiceOperations(bench: SelfServiceBench): Operation<any>[] {
  const table = () => ({ client: bench.dynamo().documentClient, tableName: bench.dynamo().tables.accounts });
  const trail = () =>
    createDynamoAuditTrail({ client: bench.dynamo().documentClient, tableName: bench.dynamo().tables.audit });

  /** A fault-free call of the API in a container of its own. */
  const healthy = async (
    admin: Admin,
    method: string,
    resource: string,
    options: CustomerApiOptions = {},
    env: Record<string, string> = {},
  ) => call(await freshHandler('customer-api', env), customerApiEvent(admin, method, resource, options));

  /** A new customer's administrator, signed in a moment ago (a login recent enough to show a secret). */
  const newAdministrator = async (): Promise<Admin> => signedInAdministrator(await bench.newUser(), table());

  /** A client the administrator made through the API. */
  async function madeClient(admin: Admin, env: Record<string, string> = {}): Promise<MadeClient> {
    const answer = await healthy(admin, 'POST', CLIENTS, { body: NEW_CLIENT }, env);
    if (answer.status !== 201) throw new Error(`arrange: the client's creation answered ${answer.status}`);
    const made = bodyOf<Created>(answer);
    return {
      clientId: made.client.clientId,
      secretId: made.secretId,
      secret: made.clientSecret,
      sourceIp: clientAddress(),
    };
  }

  /** The client's secret rolled through the API: the arranged one then expires in ROLL_SECONDS. */
  async function rolled(admin: Admin, client: MadeClient) {
    const answer = await healthy(admin, 'POST', SECRETS, {
      params: { clientId: client.clientId },
      body: { expireOthersInSeconds: ROLL_SECONDS },
    });
    if (answer.status !== 201) throw new Error(`arrange: the roll answered ${answer.status}`);
    const made = bodyOf<Created>(answer);
    return { secretId: made.secretId, secret: made.clientSecret };
  }

  /**
   * A user of the administrator's customer, made without faults; with `administers`, an
   * administrator too. Created as if an hour from now (as the operator's matrix creates its
   * users): its revocation cutoff is ahead of the call's, so an end of its administration always
   * takes both of the cutoff's writes, whatever second the run falls in.
   */
  async function colleague(admin: Admin, administers: boolean) {
    colleagues += 1;
    const username = `colleague-${colleagues}`;
    const accounts = createDynamoAccountRepository({
      ...table(),
      clock: () => new Date(Date.now() + 3_600_000),
    });
    await accounts.createUser({
      username,
      passwordHash: await hashPassword('a-colleague-password', 4),
      customerId: admin.customerId,
    });
    if (administers) await accounts.setAdministrator(username, true);
    return username;
  }

  /** Whether the user item says the user administers, read consistently without faults. */
  const administrationOf = async (username: string) =>
    (await createDynamoAccountRepository(table()).findByUsername(username))?.admin === true;

  /** The administration event of `username` in the trail with who and from where, or the warning it is not. */
  async function recordedFor(
    admin: Admin,
    type: 'user.admin.granted' | 'user.admin.revoked',
    username: string,
    excused: boolean,
  ) {
    const found = (await eventsOf(admin.customerId)).some(
      (event) =>
        event.type === type &&
        event.username === username &&
        event.actor === `user:${admin.username}` &&
        event.sourceIp === admin.sourceIp,
    );
    if (found || excused) return;
    const warnedOf = bench.logs.events('audit event not recorded').some((line) => line.type === type);
    expect(warnedOf, `the ${type} event, or the warning that it is not recorded`).toBe(true);
  }

  const grant = async (client: MadeClient, secret = client.secret, sourceIp = client.sourceIp) =>
    call(await freshHandler('oauth-token'), grantEvent({ clientId: client.clientId, secret }, sourceIp));

  /** An access token of a fault-free grant with `secret`. */
  async function tokenOf(client: MadeClient, secret = client.secret) {
    const answer = await grant(client, secret);
    if (answer.status !== 200) throw new Error(`arrange: the grant answered ${answer.status}`);
    return json(answer).access_token as string;
  }

  const stored = (clientId: string) => createDynamoClientRepository(table()).findClient(clientId);

  /** The customer's clients as the table holds them: a consistent Scan, not the index the API reads. */
  async function storedClients(customerId: string) {
    const { Items = [] } = await bench.dynamo().documentClient.send(
      new ScanCommand({
        TableName: bench.dynamo().tables.accounts,
        FilterExpression: 'sk = :sk AND customerId = :customer',
        ExpressionAttributeValues: { ':sk': 'CLIENT', ':customer': customerId },
        ConsistentRead: true,
      }),
    );
    return Items.map((item) => String(item.clientId)).sort();
  }

  /** The customer's events, scheduled expiries included (dated up to a day ahead). */
  async function eventsOf(customerId: string): Promise<AuditEvent[]> {
    const { events } = await trail().list({
      customerId,
      limit: 100,
      until: new Date(Date.now() + 86_400_000),
    });
    return events;
  }

  /** Whether the log says an event of the client was not recorded, or a scheduled one not taken back. */
  const warned = (clientId: string) =>
    ['audit event not recorded', 'scheduled audit event not taken back'].some((message) =>
      bench.logs.events(message).some((line) => line.clientId === clientId),
    );

  /**
   * The change in the trail with who and from where (invariant 12); or the warning that it is
   * not; or, `excused`, the documented gap.
   */
  async function recorded(
    admin: Admin,
    change: { readonly type: AuditEvent['type']; readonly clientId: string; readonly secretId?: string },
    excused: boolean,
  ) {
    const found = (await eventsOf(admin.customerId)).some(
      (event) =>
        event.type === change.type &&
        event.clientId === change.clientId &&
        (change.secretId === undefined || event.secretId === change.secretId) &&
        event.actor === `user:${admin.username}` &&
        event.sourceIp === admin.sourceIp,
    );
    if (found || excused) return;
    expect(warned(change.clientId), `the ${change.type} event, or the warning that it is not recorded`).toBe(
      true,
    );
  }

  /**
   * The scheduled `client.secret.expired` events of the client match its secrets' `expiresAt`
   * (invariant 12): each secret with an end has its event, and there is no other. A warning
   * (an expiry not scheduled or not taken back), or the documented gap, excuses the difference.
   */
  async function expiriesMatch(admin: Admin, clientId: string, excused: boolean) {
    const now = new Date();
    const ends = ((await stored(clientId))?.secrets ?? [])
      .filter((secret) => secret.expiresAt !== undefined && isLive(secret, now))
      .map((secret) => `${secret.id} ${secret.expiresAt}`)
      .sort();
    const scheduled = (await eventsOf(admin.customerId))
      .filter((event) => event.type === 'client.secret.expired' && event.clientId === clientId)
      .filter((event) => Date.parse(event.at) > now.getTime())
      .map((event) => {
        expect(event.secretExpiresAt, 'an expiry event’s secretExpiresAt').toBe(event.at);
        return `${event.secretId} ${event.at}`;
      })
      .sort();
    if (!excused && !warned(clientId))
      expect(scheduled, 'the scheduled expiries, one per secret that ends').toEqual(ends);
  }

  /** A secret shown nowhere but in the run: nothing in a log line. */
  function notLogged(secrets: readonly string[]) {
    const logged = JSON.stringify(bench.logs.lines());
    for (const secret of secrets) expect(logged, 'no client secret in a log line').not.toContain(secret);
  }

  /** A token of a disabled or removed client, or granted with a removed secret: the authorizer refuses it. */
  async function refused(token: string) {
    const decided = await authorize(await freshHandler('authorizer'), token);
    expect(decided.status, 'the token at the authorizer').toBe(401);
  }

  const createClient: Operation<Admin> = {
    name: 'administrator creates a client',
    function: 'customer-api',
    arrange: newAdministrator,
    act: async (admin, handler) =>
      call(await handler('customer-api'), customerApiEvent(admin, 'POST', CLIENTS, { body: NEW_CLIENT })),
    success: 201,
    // Answered from the client written: the trail's write is the last, and its failure a warning.
    outlived: ['PutItem audit:'],
    async check(admin, run, site) {
      const created = answered(run, 201).map((answer) => bodyOf<Created>(answer));
      notLogged(created.map((made) => made.clientSecret));
      for (const made of created) {
        const client = { clientId: made.client.clientId, secretId: made.secretId, secret: made.clientSecret };
        expect((await grant({ ...client, sourceIp: clientAddress() })).status, 'the secret shown').toBe(200);
      }
      const inTable = await storedClients(admin.customerId);
      const seen = new Set(created.map((made) => made.client.clientId));
      const unseen = inTable.filter((clientId) => !seen.has(clientId));
      // A 503 leaves no client, or one whose secret nobody saw: the console shows it to remove.
      expect(unseen.length, 'clients whose secret nobody saw').toBeLessThanOrEqual(
        run.first.status === 503 ? 1 : 0,
      );
      const api = await freshHandler('customer-api');
      const listed = bodyOf<{ clients: ClientView[] }>(
        await call(api, customerApiEvent(admin, 'GET', CLIENTS)),
      ).clients;
      expect(listed.map((client) => client.clientId).sort(), 'the clients the console lists').toEqual(
        inTable,
      );
      for (const client of listed) {
        expect(client, 'a client whole').toMatchObject({ ...NEW_CLIENT, enabled: true });
        expect(client.secrets).toHaveLength(1);
        await recorded(
          admin,
          { type: 'client.created', clientId: client.clientId },
          unrecorded(run, site, CREATE_WRITE) && !seen.has(client.clientId),
        );
        const removed = await call(
          api,
          customerApiEvent(admin, 'DELETE', CLIENT, { params: { clientId: client.clientId } }),
        );
        expect(removed.status, 'the console removes it').toBe(204);
      }
      expect(await storedClients(admin.customerId), 'the clients left').toEqual([]);
    },
  };

  const rollSecret: Operation<{ admin: Admin; client: MadeClient }> = {
    name: 'administrator rolls a secret',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      return { admin, client: await madeClient(admin) };
    },
    act: async ({ admin, client }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'POST', SECRETS, {
          params: { clientId: client.clientId },
          body: { expireOthersInSeconds: ROLL_SECONDS },
        }),
      ),
    success: 201,
    // The trail is written once the roll is; the answer is the roll's.
    outlived: ['PutItem audit:', 'PutItem audit: #2'],
    // The roll stored, its answer lost: the unseen secret fills the second slot (409) until removed.
    ownRefusal: (run, site) => (unrecorded(run, site, UPDATE_WRITE) ? 409 : undefined),
    async check({ admin, client }, run, site) {
      const rolls = answered(run, 201).map((answer) => bodyOf<Created>(answer));
      notLogged(rolls.map((roll) => roll.clientSecret));
      const now = new Date();
      const record = await stored(client.clientId);
      const live = (record?.secrets ?? []).filter((secret) => isLive(secret, now));
      expect(live.length, 'live secrets').toBeLessThanOrEqual(2);
      const old = live.find((secret) => secret.id === client.secretId);
      expect(old, 'the secret rolled from, still live').toBeDefined();
      for (const roll of rolls) {
        expect((await grant(client, roll.clientSecret)).status, 'the secret shown').toBe(200);
        expect(roll.client.secrets.find((secret) => secret.secretId === client.secretId)?.expiresAt).toBe(
          old?.expiresAt,
        );
      }
      if (live.length === 2) {
        const left = Date.parse(old?.expiresAt ?? '') - now.getTime();
        expect(left, 'the old secret’s end').toBeGreaterThan((ROLL_SECONDS - 120) * 1000);
        expect(left, 'the old secret’s end').toBeLessThanOrEqual(ROLL_SECONDS * 1000);
      } else {
        expect(old?.expiresAt, 'no roll stored: the old secret without an end').toBeUndefined();
      }
      const excused = unrecorded(run, site, UPDATE_WRITE);
      await expiriesMatch(admin, client.clientId, excused);
      for (const roll of rolls) {
        await recorded(
          admin,
          { type: 'client.secret.rolled', clientId: client.clientId, secretId: roll.secretId },
          false,
        );
      }
      // A 503 leaves no secret, or one nobody saw that the console lists and removes.
      const seen = new Set([client.secretId, ...rolls.map((roll) => roll.secretId)]);
      const unseen = live.filter((secret) => !seen.has(secret.id));
      expect(unseen.length, 'secrets nobody saw').toBeLessThanOrEqual(run.first.status === 503 ? 1 : 0);
      const api = await freshHandler('customer-api');
      const view = bodyOf<ClientView>(
        await call(api, customerApiEvent(admin, 'GET', CLIENT, { params: { clientId: client.clientId } })),
      );
      expect(view.secrets.map((secret) => secret.secretId).sort(), 'the secrets the console lists').toEqual(
        live.map((secret) => secret.id).sort(),
      );
      for (const secret of unseen) {
        const removed = await call(
          api,
          customerApiEvent(admin, 'DELETE', SECRET, {
            params: { clientId: client.clientId, secretId: secret.id },
          }),
        );
        expect(removed.status, 'the console removes the secret nobody saw').toBe(204);
      }
      expect(
        (await stored(client.clientId))?.secrets.filter((secret) => !seen.has(secret.id)),
        'secrets nobody saw, left',
      ).toEqual([]);
    },
  };

  /** A client rolled once (its first secret expiring, the expiry scheduled) and a token granted with the first. */
  async function rolledClient() {
    const admin = await newAdministrator();
    const client = await madeClient(admin);
    const token = await tokenOf(client);
    return { admin, client, token, successor: await rolled(admin, client) };
  }

  const removeSecret: Operation<Awaited<ReturnType<typeof rolledClient>>> = {
    name: 'administrator removes a secret',
    function: 'customer-api',
    arrange: rolledClient,
    act: async ({ admin, client }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'DELETE', SECRET, {
          params: { clientId: client.clientId, secretId: client.secretId },
        }),
      ),
    success: 204,
    outlived: ['DeleteItem audit:', 'PutItem audit:'],
    // The removal stored, its answer lost: the retry finds no such live secret.
    ownRefusal: (run, site) => (unrecorded(run, site, UPDATE_WRITE) ? 404 : undefined),
    async check({ admin, client, token, successor }, run, site) {
      expect((await stored(client.clientId))?.secrets.map((secret) => secret.id)).toEqual([
        successor.secretId,
      ]);
      expect((await grant(client)).status, 'the removed secret at the token endpoint').toBe(401);
      await refused(token);
      expect((await grant(client, successor.secret)).status, 'the secret kept').toBe(200);
      const excused = unrecorded(run, site, UPDATE_WRITE);
      await expiriesMatch(admin, client.clientId, excused);
      await recorded(
        admin,
        { type: 'client.secret.removed', clientId: client.clientId, secretId: client.secretId },
        excused,
      );
    },
  };

  const disableClient: Operation<{ admin: Admin; client: MadeClient; token: string }> = {
    name: 'administrator disables a client',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      const client = await madeClient(admin);
      return { admin, client, token: await tokenOf(client) };
    },
    act: async ({ admin, client }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'PATCH', CLIENT, {
          params: { clientId: client.clientId },
          body: { enabled: false },
        }),
      ),
    success: 200,
    async check({ admin, client, token }, run, site) {
      for (const answer of answered(run, 200)) expect(bodyOf<ClientView>(answer).enabled).toBe(false);
      const record = await stored(client.clientId);
      expect(record?.enabled, 'the client disabled').toBe(false);
      expect(record?.revokedBefore, 'its tokens revoked').toBeGreaterThan(0);
      await refused(token);
      expect((await grant(client)).status, 'the disabled client at the token endpoint').toBe(401);
      await recorded(
        admin,
        { type: 'client.disabled', clientId: client.clientId },
        unrecorded(run, site, UPDATE_WRITE),
      );
    },
  };

  const removeClient: Operation<Awaited<ReturnType<typeof rolledClient>>> = {
    name: 'administrator removes a client',
    function: 'customer-api',
    arrange: rolledClient,
    act: async ({ admin, client }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'DELETE', CLIENT, { params: { clientId: client.clientId } }),
      ),
    success: 204,
    outlived: ['DeleteItem audit:', 'PutItem audit:'],
    // The removal stored, its answer lost: the retry finds no such client.
    ownRefusal: (run, site) => (unrecorded(run, site, DELETE_WRITE) ? 404 : undefined),
    async check({ admin, client, token, successor }, run, site) {
      expect(await stored(client.clientId), 'the client item').toBeNull();
      const shown = await healthy(admin, 'GET', CLIENT, { params: { clientId: client.clientId } });
      expect(shown.status, 'the client at the API').toBe(404);
      await refused(token);
      expect((await grant(client, successor.secret)).status, 'the removed client at the token endpoint').toBe(
        401,
      );
      const excused = unrecorded(run, site, DELETE_WRITE);
      await expiriesMatch(admin, client.clientId, excused);
      await recorded(admin, { type: 'client.removed', clientId: client.clientId }, excused);
    },
  };

  /** A client locked both ways, as invariant 9's `client unlock`: strangers lock its id, then its known source's own counter. */
  async function lockedClient() {
    const admin = await newAdministrator();
    const client = await madeClient(admin, LONG_LOCKS);
    const token = await freshHandler('oauth-token', LONG_LOCKS);
    const known = await call(token, grantEvent(client, client.sourceIp));
    if (known.status !== 200) throw new Error(`arrange: the grant answered ${known.status}`);
    const stranger = bench.strangerAddress();
    const { limit } = readLoginConfig().throttle.username;
    for (const sourceIp of [stranger, client.sourceIp]) {
      for (let failure = 0; failure < limit; failure += 1) {
        const answer = await call(token, grantEvent({ ...client, secret: 'not-the-secret' }, sourceIp));
        if (answer.status !== 401) throw new Error(`arrange: a wrong secret answered ${answer.status}`);
      }
    }
    const locked = await call(token, grantEvent(client, client.sourceIp));
    if (locked.status !== 429)
      throw new Error(`arrange: the locked client's grant answered ${locked.status}`);
    return { admin, client, stranger };
  }

  const unlockClient: Operation<Awaited<ReturnType<typeof lockedClient>>> = {
    name: 'administrator unlocks a client',
    function: 'customer-api',
    env: LONG_LOCKS,
    arrange: lockedClient,
    act: async ({ admin, client }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'POST', UNLOCK, { params: { clientId: client.clientId } }),
      ),
    success: 204,
    outlived: ['PutItem audit:'],
    async check({ admin, client, stranger }) {
      const secret = bench.counterSecret();
      const nameKey = clientCounterKey(client.clientId, secret);
      const tag = knownSourceTag(nameKey, client.sourceIp, secret);
      const ownKey = knownSourceCounterKey(nameKey, tag);
      const strangerKey = clientSourceIpCounterKey(stranger);
      const store = createDynamoThrottleStore({
        client: bench.dynamo().documentClient,
        tableName: bench.dynamo().tables.loginThrottle,
      });
      const counters = await store.read([nameKey, ownKey, strangerKey]);
      const now = Date.now();
      const name = counters.get(nameKey);
      expect(name?.failures ?? 0, 'the client id’s failures').toBe(0);
      expect(name?.lockedUntil ?? 0, 'the client id’s lock').toBeLessThanOrEqual(now);
      expect(name?.knownSources.get(tag) ?? 0, 'the source kept as known').toBeGreaterThan(now);
      const own = counters.get(ownKey);
      expect(own?.failures ?? 0, 'the known source’s failures').toBe(0);
      expect(own?.lockedUntil ?? 0, 'the known source’s lock').toBeLessThanOrEqual(now);
      expect(counters.get(strangerKey)?.failures, 'the stranger’s address').toBe(
        readLoginConfig().throttle.username.limit,
      );
      const token = await freshHandler('oauth-token', LONG_LOCKS);
      for (const sourceIp of [client.sourceIp, clientAddress()]) {
        const answer = await call(token, grantEvent(client, sourceIp));
        expect(answer.status, 'the right secret after the unlock').toBe(200);
      }
      await recorded(admin, { type: 'client.unlocked', clientId: client.clientId }, false);
    },
  };

  const readTrail: Operation<{ admin: Admin; client: MadeClient }> = {
    name: 'administrator reads the audit trail',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      return { admin, client: await madeClient(admin) };
    },
    act: async ({ admin }, handler) =>
      call(await handler('customer-api'), customerApiEvent(admin, 'GET', EVENTS)),
    success: 200,
    async check({ admin, client }, run) {
      for (const answer of answered(run, 200)) {
        const { events } = bodyOf<{ events: EventView[] }>(answer);
        expect(events, 'the customer’s events').toEqual([
          {
            type: 'client.created',
            at: expect.any(String),
            actor: `user:${admin.username}`,
            sourceIp: admin.sourceIp,
            clientId: client.clientId,
            secretId: client.secretId,
            name: NEW_CLIENT.name,
          },
        ]);
      }
    },
  };

  const grantAdministration: Operation<{ admin: Admin; username: string }> = {
    name: 'administrator grants administration',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      return { admin, username: await colleague(admin, false) };
    },
    act: async ({ admin, username }, handler) =>
      call(
        await handler('customer-api'),
        customerApiEvent(admin, 'POST', ADMINISTRATORS, { body: { username } }),
      ),
    success: 204,
    outlived: ['PutItem audit:'],
    async check({ admin, username }, run, site) {
      expect(await administrationOf(username), 'the user administers').toBe(true);
      // Applied, its answer lost: the retry finds it granted already, and records nothing.
      await recordedFor(admin, 'user.admin.granted', username, unrecorded(run, site, GRANT_WRITE));
    },
  };

  const endAdministration: Operation<{ admin: Admin; username: string }> = {
    name: 'administrator ends another’s administration',
    function: 'customer-api',
    async arrange() {
      const admin = await newAdministrator();
      return { admin, username: await colleague(admin, true) };
    },
    act: async ({ admin, username }, handler) =>
      call(await handler('customer-api'), customerApiEvent(admin, 'POST', REVOKE, { body: { username } })),
    success: 204,
    outlived: ['PutItem audit:'],
    // A 503 that left the mark behind (its take-back failed too, or the mark's own write was
    // applied and its answer lost): ending it answers 409 until the mark's ENDING_HOLD_MS pass.
    ownRefusal: (run) => (run.first.status === 503 ? 409 : undefined),
    async check({ admin, username }, run, site) {
      const finished = run.retry ?? run.first;
      expect(await administrationOf(admin.username), 'the caller administers still').toBe(true);
      const ended = !(await administrationOf(username));
      expect(ended, 'ended exactly when answered 204').toBe(finished.status === 204);
      const item = await bench.dynamo().documentClient.send(
        new GetCommand({
          TableName: bench.dynamo().tables.accounts,
          Key: { pk: `USER#${username}`, sk: 'USER' },
          ConsistentRead: true,
        }),
      );
      const mark = Number(item.Item?.adminEndingUntil ?? 0);
      expect(mark, 'an end’s mark holds no longer than ENDING_HOLD_MS').toBeLessThanOrEqual(
        Date.now() + ENDING_HOLD_MS,
      );
      if (ended) expect(item.Item?.adminEnding, 'no mark left on an ended administration').toBeUndefined();
      if (!ended) {
        // The 409's mark ends by itself; then the end goes through.
        expect(finished.status).toBe(409);
        expect(mark, 'the mark left behind').toBeGreaterThan(0);
      }
      // Applied, its answer lost: the retry finds it ended already, and records nothing.
      const lostEnd = END_WRITES.some((write) => unrecorded(run, site, write));
      if (ended) await recordedFor(admin, 'user.admin.revoked', username, lostEnd);
    },
  };

  return [
    createClient,
    rollSecret,
    removeSecret,
    disableClient,
    removeClient,
    unlockClient,
    readTrail,
    grantAdministration,
    endAdministration,
  ];
}
