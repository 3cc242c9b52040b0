/**
 * Contract suites: one suite of tests per store interface, run against every DynamoDB
 * implementation (as describeEachDynamo) and against the in-memory fake the unit tests use,
 * so that a fake cannot drift from the real store without a test failing.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import type { SessionStore } from '../../lib/sessions/repository.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import type { Clock } from '../../lib/time.ts';
import { DYNAMO_KINDS, type DynamoKind, startTestDynamo, type TestDynamo } from './dynamo.ts';
import { memoryClients } from './memory-clients.ts';
import { memorySessions } from './memory-sessions.ts';
import { memoryThrottleStore } from './memory-throttle.ts';
import { memoryAccounts } from './memory-users.ts';

export type StoreKind = DynamoKind | 'memory';

/** How to make the store a contract suite tests, on each kind of implementation. */
export interface StoreFactories<S> {
  /** The real store on `dynamo`, whose tables exist already. */
  readonly dynamo: (dynamo: TestDynamo) => S | Promise<S>;
  /** The in-memory fake of tests/support. */
  readonly memory: () => S | Promise<S>;
}

const STORE_KINDS: readonly { kind: StoreKind; skipReason: string | undefined }[] = [
  ...DYNAMO_KINDS,
  { kind: 'memory', skipReason: undefined },
];

/**
 * describe() once per implementation, titled `${title} on ${kind}`: dynalite, DynamoDB Local
 * (a skipped describe saying why where this machine cannot run it) and memory. One store per
 * describe, made before its tests and shared by them (tests use names of their own); `body`
 * reaches it through `store()` inside its tests and hooks.
 */
export function describeStoreContract<S>(
  title: string,
  factories: StoreFactories<S>,
  body: (store: () => S, kind: StoreKind) => void,
): void {
  for (const { kind, skipReason } of STORE_KINDS) {
    const name =
      skipReason === undefined ? `${title} on ${kind}` : `${title} on ${kind} (skipped: ${skipReason})`;
    describe.skipIf(skipReason !== undefined)(name, () => {
      let dynamo: TestDynamo | undefined;
      let store: S | undefined;
      beforeAll(async () => {
        if (kind === 'memory') {
          store = await factories.memory();
        } else {
          dynamo = await startTestDynamo(kind);
          store = await factories.dynamo(dynamo);
        }
      });
      afterAll(() => dynamo?.close());
      body(() => {
        if (store === undefined) throw new Error(`the store of "${name}" is used outside its tests`);
        return store;
      }, kind);
    });
  }
}

/** Account repositories over one store, each with the clock it is given (default: the system clock). */
export type AccountsOn = (clock?: Clock) => AccountRepository;

export const ACCOUNT_STORES: StoreFactories<AccountsOn> = {
  dynamo: (dynamo) => (clock) =>
    createDynamoAccountRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.accounts,
      ...(clock && { clock }),
    }),
  memory: () => {
    const accounts = memoryAccounts();
    return (clock) => (clock === undefined ? accounts : accounts.withClock(clock));
  },
};

export const SESSION_STORES: StoreFactories<SessionStore> = {
  dynamo: (dynamo) =>
    createDynamoSessionStore({ client: dynamo.documentClient, tableName: dynamo.tables.sessions }),
  memory: () => memorySessions(),
};

export const THROTTLE_STORES: StoreFactories<ThrottleStore> = {
  dynamo: (dynamo) =>
    createDynamoThrottleStore({ client: dynamo.documentClient, tableName: dynamo.tables.loginThrottle }),
  memory: () => memoryThrottleStore(),
};

export const CLIENT_STORES: StoreFactories<ClientRepository> = {
  dynamo: (dynamo) =>
    createDynamoClientRepository({ client: dynamo.documentClient, tableName: dynamo.tables.accounts }),
  memory: () => memoryClients(),
};
