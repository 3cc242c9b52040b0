/**
 * The fault matrix of the operator's commands that write: each DynamoDB call a command makes
 * fails in turn, at the wire, in each way DynamoDB can fail; then the operator runs the same
 * command again once DynamoDB is back, and the tables are held to docs/FAULTS.md's invariants.
 * The CLI runs against a deployed stage (--stage, AWS_ENDPOINT_URL_DYNAMODB: the proxy).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { type DynamoProxy, startDynamoProxy } from '../../../dev/local/dynamodb-proxy.ts';
import { ensureTables } from '../../../dev/local/tables.ts';
import { readStageParams } from '../../../infra/stage-params.ts';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import { accountItems } from '../../../lib/accounts/dynamodb-items.ts';
import type { AccountRepository } from '../../../lib/accounts/repository.ts';
import { hashPassword } from '../../../lib/auth/passwords.ts';
import { type ClientRecord, newClientId } from '../../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../../lib/clients/secrets.ts';
import { isAppError } from '../../../lib/errors.ts';
import { createLogger } from '../../../lib/log.ts';
import { keyParameterNames, tableNames } from '../../../lib/stage.ts';
import {
  clientCounterKey,
  clientSourceIpCounterKey,
  knownSourceCounterKey,
  knownSourceTag,
  refusedUntil,
  sourceIpCounterKey,
  usernameCounterKey,
} from '../../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../../lib/throttle/dynamodb.ts';
import { createLoginThrottle } from '../../../lib/throttle/login-throttle.ts';
import type { LoginAttempt, ThrottlePolicy } from '../../../lib/throttle/throttle.ts';
import { counterSecretOf, parseJwks, parseKeyring } from '../../../lib/tokens/keys.ts';
import { failure } from '../../../ops/admin/errors.ts';
import type { ParameterStore } from '../../../ops/admin/keys.ts';
import { runAdmin } from '../../../ops/admin/main.ts';
import { startTestDynamo, type TestDynamo } from '../../support/dynamo.ts';
import { describeMatrix, FAULT_DYNAMO, type FaultKind, faultPlan, staysDown } from '../../support/faults.ts';
import { noMetrics } from '../../support/memory-metrics.ts';
import { memoryParameters, type StoredParameter } from '../../support/parameters.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const IMPORT_FILE = resolve(ROOT, 'docs/import-example.jsonl');
const PASSWORD = 'a-long-test-password';
const NEW_PASSWORD = 'another-long-password';

interface Outcome {
  readonly code: number;
  readonly stderr: string[];
}

let dynamo: TestDynamo;
let proxy: DynamoProxy;
let dir: string;
let passwordHash: string;

type Tables = ReturnType<typeof tableNames>;
const accountsOf = (tables: Tables): AccountRepository =>
  createDynamoAccountRepository({ client: dynamo.documentClient, tableName: tables.accounts });

/** The CLI on a stage whose DynamoDB is the proxy; `password` is what stdin holds. */
async function admin(
  args: readonly string[],
  stage: string,
  options: { parameters?: ParameterStore; now?: () => Date } = {},
): Promise<Outcome> {
  const stderr: string[] = [];
  const code = await runAdmin(['--stage', stage, ...args], {
    env: { AWS_REGION: 'eu-central-1' },
    cwd: dir,
    stdout: () => {},
    stderr: (line) => stderr.push(line),
    readPassword: async () => NEW_PASSWORD,
    ...(options.parameters && { parameters: () => options.parameters as ParameterStore }),
    ...(options.now && { now: options.now }),
    // Cost 8: the highest the import file holds, which a stage of lower cost refuses.
    stageParams: (name) => ({ ...readStageParams(name), bcryptCost: 8 }),
  });
  return { code, stderr };
}

let counter = 0;
const unique = (prefix: string) => {
  counter += 1;
  return `${prefix}-${counter}`;
};

interface Context {
  readonly stage: string;
  /** The stage's SSM parameters (the key commands'). */
  readonly parameters: Map<string, StoredParameter>;
  readonly tables: Tables;
  readonly username: string;
  readonly customerId: string;
}

interface Command {
  readonly name: string;
  /** The faults a call of this command can meet; SSM's at its store (see SSM_KINDS). */
  readonly kinds?: readonly FaultKind[];
  /** The stage's SSM parameters: the key commands' dependency instead of DynamoDB. */
  readonly ssm?: boolean;
  /** A stage of its own per run (the import's records are fixed), or the suite's. */
  readonly ownStage?: boolean;
  /** The state before the command, written without faults. */
  arrange?(context: Context): Promise<void>;
  args(context: Context): string[];
  /** Sites after which the command's work is done: a fault there may end in success. */
  readonly doneBefore?: readonly string[];
  /** The operator's second run, when it differs from the first (the failure named it). */
  again?(context: Context, first: Outcome): string[];
  /** What a second run may answer, besides success, for its own reason: a line of its stderr. */
  readonly ownRefusal?: RegExp;
  check(context: Context): Promise<void>;
}

/** The user's item and its membership item: both there, or neither. */
async function userWhole(context: Context, expected: 'present' | 'absent') {
  const user = await accountsOf(context.tables).findByUsername(context.username);
  const member = await dynamo.documentClient.send(
    new GetCommand({
      TableName: context.tables.accounts,
      Key: accountItems.memberKey(context.customerId, context.username),
    }),
  );
  expect(user === null ? 'absent' : 'present', 'the user').toBe(expected);
  expect(member.Item === undefined ? 'absent' : 'present', 'its membership').toBe(expected);
  return user;
}

/** The user's revocation cutoff as stored. */
async function cutoffOf(context: Context) {
  const { Item } = await dynamo.documentClient.send(
    new GetCommand({
      TableName: context.tables.accounts,
      Key: accountItems.userKey(context.username),
    }),
  );
  return Number(Item?.revokedBefore);
}
/** The cutoff each run's user was created with. */
const arrangedCutoffs = new WeakMap<Context, number>();

/** The user's revocation cutoff moved forward. */
async function revokedSince(context: Context) {
  expect(await cutoffOf(context)).toBeGreaterThan(arrangedCutoffs.get(context) ?? Number.POSITIVE_INFINITY);
}

/**
 * The user a command acts on. Created as if an hour from now: its revocation cutoff is ahead
 * of the command's, so a revocation always takes both of its writes (the second moves a
 * cutoff that is not behind), and the call sites do not depend on the second the run falls in.
 */
const existingUser = async (context: Context) => {
  await accountsOf(context.tables).addPickupAddress(context.customerId, 'PRG01');
  const anHourAhead = () => new Date(Date.now() + 3_600_000);
  await createDynamoAccountRepository({
    client: dynamo.documentClient,
    tableName: context.tables.accounts,
    clock: anHourAhead,
  }).createUser({
    username: context.username,
    passwordHash,
    customerId: context.customerId,
  });
  arrangedCutoffs.set(context, await cutoffOf(context));
};

const clientsOf = (tables: Tables) =>
  createDynamoClientRepository({ client: dynamo.documentClient, tableName: tables.accounts });
/** The client a command acts on, by run; and its two secrets' ids where it holds two. */
const arrangedClients = new WeakMap<Context, { clientId: string; secretIds: string[] }>();
const clientOf = (context: Context) => {
  const arranged = arrangedClients.get(context);
  if (arranged === undefined) throw new Error('arrange: no client');
  return arranged;
};
/** A client of the run's customer with `secrets` live secrets. */
const existingClient =
  (secrets = 1) =>
  async (context: Context) => {
    const clientId = newClientId();
    const stored = Array.from(
      { length: secrets },
      (_, i) => newClientSecret(new Date(Date.now() + i)).stored,
    );
    const [first, ...more] = stored;
    if (first === undefined) throw new Error('arrange: a client has a secret');
    const clients = clientsOf(context.tables);
    await clients.createClient({
      clientId,
      customerId: context.customerId,
      scopes: ['tracking:read'],
      secret: first,
    });
    for (const secret of more) await clients.addClientSecret(clientId, secret);
    arrangedClients.set(context, { clientId, secretIds: stored.map(({ id }) => id) });
  };
const storedClient = async (context: Context): Promise<ClientRecord | null> =>
  clientsOf(context.tables).findClient(clientOf(context).clientId);

const CLIENT_COMMANDS: Command[] = [
  {
    name: 'client add',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    args: ({ customerId }) => ['client', 'add', customerId, '--scope', 'tracking:read'],
    async check(context) {
      // A creation whose answer was lost and the operator's second run make two clients: the
      // first's secret was never shown (docs/FAULTS.md), and `client list` shows it to remove.
      const clients = await clientsOf(context.tables).listClients(context.customerId);
      expect(clients.length, 'the customer’s clients').toBeGreaterThanOrEqual(1);
      expect(clients.length).toBeLessThanOrEqual(2);
      for (const client of clients) {
        expect(client).toMatchObject({ enabled: true, scopes: ['tracking:read'] });
        expect(client.secrets).toHaveLength(1);
      }
    },
  },
  {
    name: 'client disable',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    arrange: existingClient(),
    args: (context) => ['client', 'disable', clientOf(context).clientId],
    async check(context) {
      const client = await storedClient(context);
      expect(client?.enabled).toBe(false);
      expect(client?.revokedBefore).toBeGreaterThan(0);
    },
  },
  {
    name: 'client secret add',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    arrange: existingClient(),
    args: (context) => ['client', 'secret', 'add', clientOf(context).clientId],
    // The first run's secret was stored, its answer lost: never shown, it fills the second slot.
    ownRefusal: /2 live secrets/,
    async check(context) {
      const client = await storedClient(context);
      expect(client?.secrets).toHaveLength(2);
      expect(client?.secrets[0]?.id).toBe(clientOf(context).secretIds[0]);
    },
  },
  {
    name: 'client secret remove',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    arrange: existingClient(2),
    args: (context) => [
      'client',
      'secret',
      'remove',
      clientOf(context).clientId,
      clientOf(context).secretIds[0] ?? '',
    ],
    ownRefusal: /no live secret with this id/,
    async check(context) {
      expect((await storedClient(context))?.secrets.map(({ id }) => id)).toEqual([
        clientOf(context).secretIds[1],
      ]);
    },
  },
  {
    name: 'client remove',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    arrange: existingClient(),
    args: (context) => ['client', 'remove', clientOf(context).clientId],
    ownRefusal: /client pcl_[0-9a-f]{20} not found/,
    async check(context) {
      expect(await storedClient(context)).toBeNull();
    },
  },
  {
    name: 'user scopes',
    arrange: existingUser,
    args: ({ username }) => ['user', 'scopes', username, '--scope', 'tracking:read'],
    async check(context) {
      expect((await userWhole(context, 'present'))?.scopes).toEqual(['tracking:read']);
      await revokedSince(context);
    },
  },
];

const CALLBACK = 'https://shop.example/callback';
/** The platform a command acts on, by run. */
const arrangedPlatforms = new WeakMap<Context, string>();
const platformOf = (context: Context) => {
  const clientId = arrangedPlatforms.get(context);
  if (clientId === undefined) throw new Error('arrange: no platform');
  return clientId;
};
const existingPlatform = async (context: Context) => {
  const clientId = newClientId();
  await clientsOf(context.tables).createPlatform({
    clientId,
    name: `Shop app ${context.customerId}`,
    scopes: ['tracking:read'],
    redirectUris: [CALLBACK],
    secret: newClientSecret(new Date()).stored,
  });
  arrangedPlatforms.set(context, clientId);
};
const storedPlatform = async (context: Context) => clientsOf(context.tables).findClient(platformOf(context));

const PLATFORM_COMMANDS: Command[] = [
  {
    name: 'platform add',
    args: ({ customerId }) => [
      'platform',
      'add',
      `Shop app ${customerId}`,
      '--redirect-uri',
      CALLBACK,
      '--scope',
      'tracking:read',
    ],
    async check(context) {
      // As client add: a creation whose answer was lost and the second run make two, the first's
      // secret never shown; `platform list` shows it to remove.
      const platforms = (await clientsOf(context.tables).listPlatforms()).filter(
        (platform) => platform.name === `Shop app ${context.customerId}`,
      );
      expect(platforms.length, 'the platforms registered').toBeGreaterThanOrEqual(1);
      expect(platforms.length).toBeLessThanOrEqual(2);
      for (const platform of platforms)
        expect(platform).toMatchObject({ enabled: true, platform: { redirectUris: [CALLBACK] } });
    },
  },
  {
    name: 'platform redirect-uri add',
    arrange: existingPlatform,
    args: (context) => ['platform', 'redirect-uri', 'add', platformOf(context), `${CALLBACK}/2`],
    async check(context) {
      expect((await storedPlatform(context))?.platform?.redirectUris).toEqual([CALLBACK, `${CALLBACK}/2`]);
    },
  },
  {
    name: 'platform disable',
    arrange: existingPlatform,
    args: (context) => ['platform', 'disable', platformOf(context)],
    async check(context) {
      const platform = await storedPlatform(context);
      expect(platform?.enabled).toBe(false);
      expect(platform?.revokedBefore).toBeGreaterThan(0);
    },
  },
  {
    name: 'platform remove',
    arrange: existingPlatform,
    args: (context) => ['platform', 'remove', platformOf(context)],
    ownRefusal: /platform pcl_[0-9a-f]{20} not found/,
    async check(context) {
      expect(await storedPlatform(context)).toBeNull();
    },
  },
];

/** An address of the run's own: the arranged failures add up on no other run's address counter. */
const runAddress = () => {
  const n = Number(unique('address').split('-')[1]);
  return `10.9.${Math.floor(n / 250)}.${(n % 250) + 1}`;
};

/** What a run's unlock acts on: the name's counter, a source it knows, and a stranger's address. */
interface ArrangedLocks {
  readonly attempt: (sourceIp: string) => LoginAttempt;
  readonly nameKey: string;
  readonly knownKey: string;
  readonly tag: string;
  readonly strangerKey: string;
  readonly policy: ThrottlePolicy;
  readonly throttle: ReturnType<typeof createLoginThrottle>;
}
const arrangedLocks = new WeakMap<Context, ArrangedLocks>();

/**
 * The name's counter locked both ways, as the functions leave it: a source it knows (a
 * success from there), strangers' wrong passwords locking the name for every other source, and
 * then wrong passwords from the known source locking that source's own counter. The counters
 * are keyed with the stage's counter secret (keys init first).
 */
const lockedBothWays = (client: boolean) => async (context: Context) => {
  await initialised(context);
  const names = keyParameterNames(context.stage);
  const secret = counterSecretOf(parseKeyring(context.parameters.get(names.signingKeyring)?.value ?? ''));
  const params = readStageParams(context.stage);
  const policy = params.usernameThrottle;
  const address: ThrottlePolicy = { ...policy, limit: 100, windowSeconds: 3600, inflightLimit: 100 };
  const throttle = createLoginThrottle({
    store: createDynamoThrottleStore({
      client: dynamo.documentClient,
      tableName: context.tables.loginThrottle,
    }),
    settings: {
      username: policy,
      sourceIp: address,
      clientSourceIp: address,
      knownSourceSeconds: params.knownSourceSeconds,
    },
    counterSecret: secret,
    logger: createLogger('error', () => {}),
    metrics: noMetrics,
  });
  const name = client ? clientOf(context).clientId : context.username;
  const attempt = (sourceIp: string): LoginAttempt => ({
    username: name,
    sourceIp,
    ...(client && { client }),
  });
  const home = runAddress();
  const stranger = runAddress();
  await throttle.succeeded(await throttle.begin(attempt(home)));
  for (const sourceIp of [stranger, home]) {
    for (let failure = 0; failure < policy.limit; failure += 1) {
      await throttle.failed(attempt(sourceIp), 'bad password', await throttle.begin(attempt(sourceIp)));
    }
  }
  const nameKey = client ? clientCounterKey(name, secret) : usernameCounterKey(name, secret);
  const tag = knownSourceTag(nameKey, home, secret);
  const locks = {
    attempt,
    nameKey,
    tag,
    knownKey: knownSourceCounterKey(nameKey, tag),
    strangerKey: client ? clientSourceIpCounterKey(stranger) : sourceIpCounterKey(stranger),
    policy,
    throttle,
  };
  for (const sourceIp of [runAddress(), home]) {
    if ((await admitted(locks, sourceIp)) !== false) throw new Error('arrange: not locked both ways');
  }
  arrangedLocks.set(context, locks);
};

/** Whether an attempt from `sourceIp` is let in (given back at once, never decided). */
async function admitted(locks: ArrangedLocks, sourceIp: string): Promise<boolean> {
  try {
    await locks.throttle.undecided(await locks.throttle.begin(locks.attempt(sourceIp)));
    return true;
  } catch (error) {
    if (isAppError(error) && error.code === 'TOO_MANY_ATTEMPTS') return false;
    throw error;
  }
}

/**
 * After an unlock (run again after a fault if it failed): the name's counter holds no failure
 * and refuses no one, its known source is still known and its own counter refuses it no
 * longer, and a stranger's address keeps its failures (an address's counter only decays).
 */
async function unlocked(context: Context) {
  const locks = arrangedLocks.get(context);
  if (locks === undefined) throw new Error('arrange: no locks');
  const store = createDynamoThrottleStore({
    client: dynamo.documentClient,
    tableName: context.tables.loginThrottle,
  });
  const counters = await store.read([locks.nameKey, locks.knownKey, locks.strangerKey]);
  const now = Date.now();
  const name = counters.get(locks.nameKey);
  expect(name?.failures ?? 0, 'the name’s failures').toBe(0);
  expect(name === undefined ? 0 : refusedUntil(name, locks.policy, now), 'the name’s lock').toBe(0);
  expect(name?.knownSources.get(locks.tag) ?? 0, 'the source kept as known').toBeGreaterThan(now);
  const own = counters.get(locks.knownKey);
  expect(own?.failures ?? 0, 'the known source’s failures').toBe(0);
  expect(own === undefined ? 0 : refusedUntil(own, locks.policy, now), 'the known source’s lock').toBe(0);
  expect(counters.get(locks.strangerKey)?.failures, 'the stranger’s address').toBe(locks.policy.limit);
  expect(await admitted(locks, runAddress()), 'a new source let in').toBe(true);
}

const UNLOCK_COMMANDS: Command[] = [
  {
    name: 'user unlock',
    async arrange(context) {
      await existingUser(context);
      await lockedBothWays(false)(context);
    },
    args: ({ username }) => ['user', 'unlock', username],
    check: unlocked,
  },
  {
    name: 'client unlock',
    // The audit event is written once the change is made: a fault there leaves the change made.
    doneBefore: ['PutItem audit:'],
    async arrange(context) {
      await existingClient()(context);
      await lockedBothWays(true)(context);
    },
    args: (context) => ['client', 'unlock', clientOf(context).clientId],
    check: unlocked,
  },
];

const COMMANDS: Command[] = [
  {
    name: 'user add',
    arrange: (context) =>
      accountsOf(context.tables)
        .addPickupAddress(context.customerId, 'PRG01')
        .then(() => {}),
    args: ({ username, customerId }) => ['user', 'add', username, '--customer', customerId],
    ownRefusal: /a user with this name \(in any letter case\) exists/,
    async check(context) {
      const user = await userWhole(context, 'present');
      expect(await bcrypt.compare(NEW_PASSWORD, user?.passwordHash ?? '')).toBe(true);
      expect(user?.depotCode).toBe('PRG01');
    },
  },
  {
    name: 'user passwd',
    arrange: existingUser,
    args: ({ username }) => ['user', 'passwd', username],
    async check(context) {
      const user = await userWhole(context, 'present');
      expect(await bcrypt.compare(NEW_PASSWORD, user?.passwordHash ?? '')).toBe(true);
      await revokedSince(context);
    },
  },
  {
    name: 'user disable',
    arrange: existingUser,
    args: ({ username }) => ['user', 'disable', username],
    async check(context) {
      expect((await userWhole(context, 'present'))?.enabled).toBe(false);
      await revokedSince(context);
    },
  },
  {
    name: 'user enable',
    async arrange(context) {
      await existingUser(context);
      await accountsOf(context.tables).setEnabled(context.username, false);
    },
    args: ({ username }) => ['user', 'enable', username],
    async check(context) {
      expect((await userWhole(context, 'present'))?.enabled).toBe(true);
    },
  },
  {
    name: 'user logout',
    arrange: existingUser,
    args: ({ username }) => ['user', 'logout', username],
    check: revokedSince,
  },
  {
    name: 'user remove',
    arrange: existingUser,
    args: ({ username }) => ['user', 'remove', username],
    ownRefusal: /user "operator-made-\d+" not found/,
    async check(context) {
      await userWhole(context, 'absent');
    },
  },
  {
    name: 'address add',
    arrange: existingUser,
    args: ({ customerId }) => ['address', 'add', customerId, '--depot', 'BRQ02'],
    // Marking the address finished: what a second run would otherwise do.
    doneBefore: ['UpdateItem accounts:CUSTOMER/ADDRESS'],
    async check(context) {
      const addresses = await accountsOf(context.tables).listPickupAddresses(context.customerId);
      expect(addresses.map(({ depotCode }) => depotCode)).toEqual(['PRG01', 'BRQ02']);
    },
  },
  {
    name: 'import',
    ownStage: true,
    args: () => ['import', IMPORT_FILE],
    async check(context) {
      expect(await tableContents(context.tables)).toEqual(cleanImport);
    },
  },
];

/** The plain passwords of the import file, by username: the import hashes them with a salt of its own. */
const plainPasswords = async () =>
  new Map(
    (await readFile(IMPORT_FILE, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('"password"'))
      .map((line) => JSON.parse(line) as { username: string; password: string })
      .map(({ username, password }) => [username, password]),
  );

/**
 * SSM has no local implementation, so the key commands meet their faults at the parameter
 * store (ops/admin/keys.ts ParameterStore) over an in-memory SSM, not at the wire: a call
 * that fails (an error, throttling and a hang all end as the SDK's error), one applied whose
 * answer is lost, and one the SDK sends again after that.
 */
const SSM_KINDS: readonly FaultKind[] = ['error', 'lost', 'lost-retried'];

/** The keys of the stage as stored: the key set holds the keyring's active and next keys. */
function storedKeys(context: Context) {
  const names = keyParameterNames(context.stage);
  const keyring = parseKeyring(context.parameters.get(names.signingKeyring)?.value ?? '');
  const jwks = parseJwks(context.parameters.get(names.jwks)?.value ?? '');
  const published = jwks.keys.map(({ kid }) => kid);
  expect(published, 'the key set holds the key that signs').toContain(keyring.active.kid);
  expect(published, 'and the next one').toContain(keyring.next.kid);
  return { keyring, published };
}

const arrangedKeys = new WeakMap<Context, ReturnType<typeof storedKeys>>();
const initialised = async (context: Context) => {
  const run = await admin(['keys', 'init'], context.stage, {
    parameters: memoryParameters({ stored: context.parameters }).store,
  });
  if (run.code !== 0) throw new Error(`arrange: keys init exited ${run.code}: ${run.stderr.join(' | ')}`);
  arrangedKeys.set(context, storedKeys(context));
};
/** A day on: past keyReloadInterval, so a rotation is not refused for timing. */
const dayLater = () => new Date(Date.now() + 86_400_000);

const KEY_COMMANDS: Command[] = [
  {
    name: 'keys init',
    kinds: SSM_KINDS,
    ssm: true,
    args: () => ['keys', 'init'],
    // A first run that published the key set and failed before the keyring says to finish with --force.
    again: (_context, first) =>
      first.stderr.join(' ').includes('--force') ? ['keys', 'init', '--force'] : ['keys', 'init'],
    ownRefusal: /has keys already/,
    async check(context) {
      storedKeys(context);
    },
  },
  {
    name: 'keys rotate',
    kinds: SSM_KINDS,
    ssm: true,
    arrange: initialised,
    args: () => ['keys', 'rotate'],
    // The first run's keyring write was applied (its answer lost): the rotation is done, and
    // a second one within keyReloadInterval is refused for its timing.
    ownRefusal: /were rotated at \S+, less than keyReloadInterval/,
    async check(context) {
      const before = arrangedKeys.get(context);
      expect(storedKeys(context).keyring.active.kid, 'the next key signs').toBe(before?.keyring.next.kid);
    },
  },
  {
    name: 'keys revoke',
    kinds: SSM_KINDS,
    ssm: true,
    arrange: initialised,
    args: (context) => ['keys', 'revoke', '--', arrangedKeys.get(context)?.keyring.active.kid ?? ''],
    // The first run did finish (its keyring write was applied, its answer lost): the key is gone.
    ownRefusal: /no key \S+ in the keyring or the key set/,
    async check(context) {
      const revoked = arrangedKeys.get(context)?.keyring.active.kid;
      const { keyring, published } = storedKeys(context);
      expect(published).not.toContain(revoked);
      expect([keyring.active.kid, keyring.next.kid, ...keyring.retired.map(({ kid }) => kid)]).not.toContain(
        revoked,
      );
    },
  },
];

/** One run's SSM faults, planted as faultPlan plants DynamoDB's. */
function ssmFaults(site?: string, kind?: FaultKind) {
  const sites: string[] = [];
  const seen = new Map<string, number>();
  let planted = false;
  const unavailable = (call: string) =>
    failure(`SSM: cannot ${call.split(' ')[0]} parameter (eu-central-1): InternalServerError`);
  const fault = async (call: string, apply: () => Promise<void>) => {
    const count = (seen.get(call) ?? 0) + 1;
    seen.set(call, count);
    const named = count === 1 ? `SSM ${call}` : `SSM ${call} #${count}`;
    if (planted) {
      if (kind === 'lost-retried') return apply();
      throw unavailable(call);
    }
    sites.push(named);
    if (named !== site || kind === undefined) return apply();
    planted = true;
    if (kind === 'error') throw unavailable(call);
    await apply();
    if (kind === 'lost') throw unavailable(call);
    // The SDK sends it again.
    return call.startsWith('put') ? apply() : undefined;
  };
  return {
    fault,
    sites,
    get planted() {
      return planted;
    },
  };
}

/** The accounts table's items, without the times a run writes; a hash of a plain password as whether it verifies. */
async function tableContents(tables: Tables) {
  const { Items = [] } = await dynamo.documentClient.send(new ScanCommand({ TableName: tables.accounts }));
  const passwords = await plainPasswords();
  const items = await Promise.all(
    Items.map(async ({ createdAt, updatedAt, revokedBefore, ...item }) => {
      const password = passwords.get(String(item.username));
      if (password !== undefined && item.sk === 'USER') {
        item.passwordHash = (await bcrypt.compare(password, String(item.passwordHash)))
          ? 'verifies'
          : 'wrong';
      }
      return JSON.stringify(item);
    }),
  );
  return items.sort();
}
let cleanImport: string[];

async function newStage() {
  const stage = `fault${randomUUID().slice(0, 8)}`;
  const setup = dynamo.client();
  await ensureTables(setup, stage);
  setup.destroy();
  return stage;
}

beforeAll(async () => {
  dynamo = await startTestDynamo(FAULT_DYNAMO);
  proxy = await startDynamoProxy(dynamo.endpoint);
  dir = await mkdtemp(join(tmpdir(), 'parcel-auth-faults-'));
  await writeFile(join(dir, 'config'), '');
  for (const [name, value] of Object.entries({
    AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'config'),
  }))
    vi.stubEnv(name, value);
  passwordHash = await hashPassword(PASSWORD, 4);
  const stage = await newStage();
  const clean = await admin(['import', IMPORT_FILE], stage);
  if (clean.code !== 0) throw new Error(`arrange: import exited ${clean.code}: ${clean.stderr.join(' | ')}`);
  cleanImport = await tableContents(tableNames(stage));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await proxy?.close();
  await dynamo?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function run(command: Command, site?: string, kind?: FaultKind) {
  proxy.decide(() => 'forward');
  const stage = command.ownStage === true || command.ssm === true ? await newStage() : dynamo.stage;
  const context: Context = {
    stage,
    parameters: new Map(),
    tables: tableNames(stage),
    username: unique('operator-made'),
    customerId: unique('C-OP'),
  };
  await command.arrange?.(context);
  const dynamoPlan = faultPlan(context.tables, command.ssm === true ? undefined : site, kind);
  const ssmPlan = ssmFaults(command.ssm === true ? site : undefined, kind);
  const plan = command.ssm === true ? ssmPlan : dynamoPlan;
  const faulty = {
    parameters: memoryParameters({ stored: context.parameters, through: ssmPlan.fault }).store,
    now: dayLater,
  };
  const healthy = { parameters: memoryParameters({ stored: context.parameters }).store, now: dayLater };
  proxy.decide(dynamoPlan.verdict);
  const first = await admin(command.args(context), stage, faulty);
  proxy.decide(() => 'forward');
  const again =
    first.code === 0
      ? undefined
      : await admin(command.again?.(context, first) ?? command.args(context), stage, healthy);

  const dependency = command.ssm === true ? 'SSM' : 'DynamoDB';
  const done = site !== undefined && command.doneBefore?.includes(site) === true && first.code === 0;
  if (plan.planted && kind !== undefined && staysDown(kind) && !done) {
    expect(first.code, `${kind} at ${site}: the exit status while ${dependency} fails`).toBe(1);
    expect(first.stderr.join('\n')).toMatch(
      command.ssm === true
        ? /^error: .*SSM: cannot/m
        : /^error: DynamoDB of stage \S+ \(eu-central-1\) is unavailable/m,
    );
  } else {
    expect(
      first.code,
      `${kind ?? 'no fault'} at ${site}: ${dependency} answered in the end: ${first.stderr.join(' | ')}`,
    ).toBe(0);
  }
  if (again !== undefined && again.code !== 0) {
    expect(command.ownRefusal, `run again after recovery: ${again.stderr.join(' | ')}`).toBeDefined();
    expect(again.stderr.join('\n')).toMatch(command.ownRefusal as RegExp);
  }
  await command.check(context);
  return plan.sites;
}

describe('the fault matrix of the admin commands', () => {
  describeMatrix(
    'admin',
    [...COMMANDS, ...CLIENT_COMMANDS, ...PLATFORM_COMMANDS, ...UNLOCK_COMMANDS, ...KEY_COMMANDS],
    run,
  );
});
