/**
 * The admin CLI's test bench: one embedded DynamoDB (dynalite) with the tables of the local
 * stage and of one deployed stage, a temporary DATA_DIR, and two ways to run the CLI
 * against them: in-process through `runAdmin` (stdout, stderr and the password reads
 * captured) and as `node ops/admin.ts`, as operators run it.
 *
 * `useAdminCli()` registers the suite's beforeAll/afterAll hooks in the calling test file;
 * what it returns is usable inside tests only.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type EmbeddedDynamo, startDynalite } from '../../dev/local/dynalite.ts';
import { ensureTables } from '../../dev/local/tables.ts';
import { readStageParams, type StageParams } from '../../infra/stage-params.ts';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { createDynamoSecurityPolicies } from '../../lib/accounts/dynamodb-policies.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import type { AuditTrail } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { createDynamoPasskeyStore } from '../../lib/passkeys/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import { systemClock } from '../../lib/time.ts';
import { counterSecretOf, parseKeyring } from '../../lib/tokens/keys.ts';
import { createBulkAccountStore } from '../../ops/accounts/bulk-dynamodb.ts';
import type { ParameterStore } from '../../ops/admin/keys.ts';
import { runAdmin } from '../../ops/admin/main.ts';
import { ensureLocalKeys } from '../../ops/keys/local.ts';
import { freePort } from './ports.ts';
import { runScript, type ScriptRun } from './run-script.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** A deployed stage whose tables live in the same embedded DynamoDB as the local stage's. */
export const OTHER_STAGE = 'teststage';

/** A name no other test uses: every test of a file shares the one embedded DynamoDB. */
export const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The non-empty lines of `text`. */
export const lines = (text: string) => text.split('\n').filter((line) => line !== '');

/** One in-process run of the CLI. */
/**
 * The environment of `node ops/admin.ts --stage …` against the embedded DynamoDB as a
 * deployed stage's endpoint, with the local stack down (its port closed) and AWS's config
 * files in `awsDir`: only the stage's endpoint can answer.
 */
export const deployedStageEnv = async (
  endpoint: string,
  awsDir: string,
): Promise<Record<string, string>> => ({
  AWS_ENDPOINT_URL_DYNAMODB: endpoint,
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  AWS_CONFIG_FILE: join(awsDir, 'config'),
  AWS_SHARED_CREDENTIALS_FILE: join(awsDir, 'credentials'),
  DYNAMODB_PORT: String(await freePort()),
});

export interface AdminRun {
  readonly code: number;
  /** Every line written to stdout, joined with newlines. */
  readonly stdout: string;
  /** Every line written to stderr. */
  readonly stderr: string[];
  /** How often the CLI read the password from stdin. */
  readonly passwordReads: number;
}

export interface AdminOptions {
  /** What stdin holds when the CLI reads a password. */
  readonly password?: string;
  /** Added to (or overriding) the local target's DYNAMODB_PORT and DATA_DIR. */
  readonly env?: Record<string, string>;
  /** The SSM parameter store the key commands of a deployed stage use. */
  readonly parameters?: ParameterStore;
  /** The clock of the local account store and API clients; default the system clock. */
  readonly accountsClock?: () => Date;
  /** Stage parameters to use instead of serverless.yml's (the others are serverless.yml's). */
  readonly stageParams?: Partial<StageParams>;
  /** Whether stdout is a terminal (listings print a table); default no. */
  readonly stdoutIsTTY?: boolean;
  /** The CLI's clock (the audit events' time); default the system clock. */
  readonly now?: () => Date;
  /** The audit table the CLI writes; default the local stage's (a missing one fails every write). */
  readonly auditTable?: string;
}

export interface AdminCli {
  /** The embedded DynamoDB's endpoint, as a deployed stage's AWS_ENDPOINT_URL_DYNAMODB. */
  readonly endpoint: string;
  /** The account store of the local stage, which the CLI acts on without --stage. */
  readonly local: AccountRepository;
  /** The account store of OTHER_STAGE. */
  readonly deployed: AccountRepository;
  /** The API clients of the local stage. */
  readonly clients: ClientRepository;
  /** The failed-login counters of the local stage. */
  readonly throttleStore: ThrottleStore;
  /** The audit trail of the local stage. */
  readonly audit: AuditTrail;
  /** The embedded DynamoDB's document client, for reading items as stored. */
  readonly documentClient: DynamoDBDocumentClient;
  /** The secret the local stage keys its username counters with (its keyring made if missing). */
  counterSecret(): Promise<Uint8Array>;
  /** Runs the CLI in-process on the local target; `options.password` is what stdin holds. */
  admin(args: string[], options?: AdminOptions): Promise<AdminRun>;
  /**
   * `admin` as an arrange step: rejects, failing the test with the CLI's exit status and
   * stderr, unless the run exits 0.
   */
  adminOk(args: string[], options?: AdminOptions): Promise<AdminRun>;
  /** Runs `node ops/admin.ts` as an operator would, with `stdin` piped in. */
  spawnAdmin(args: string[], options?: { stdin?: string; env?: Record<string, string> }): Promise<ScriptRun>;
}

interface Bench {
  readonly dynamo: EmbeddedDynamo;
  readonly dataDir: string;
  readonly client: ReturnType<typeof createDocumentClient>;
  readonly local: AccountRepository;
  readonly deployed: AccountRepository;
  readonly clients: ClientRepository;
  readonly throttleStore: ThrottleStore;
  readonly audit: AuditTrail;
}

/** Starts the bench before the calling file's tests and removes it after them. */
export function useAdminCli(): AdminCli {
  let bench: Bench | undefined;
  let dynamo: EmbeddedDynamo | undefined;
  let dataDir: string | undefined;

  beforeAll(async () => {
    dynamo = await startDynalite({ port: 0 });
    await ensureTables(dynamo.client(), 'local');
    await ensureTables(dynamo.client(), OTHER_STAGE);
    dataDir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-'));
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint });
    bench = {
      dynamo,
      dataDir,
      client,
      local: createDynamoAccountRepository({ client, tableName: tableNames('local').accounts }),
      deployed: createDynamoAccountRepository({ client, tableName: tableNames(OTHER_STAGE).accounts }),
      clients: createDynamoClientRepository({ client, tableName: tableNames('local').accounts }),
      throttleStore: createDynamoThrottleStore({ client, tableName: tableNames('local').loginThrottle }),
      audit: createDynamoAuditTrail({ client, tableName: tableNames('local').audit }),
    };
  });

  afterAll(async () => {
    bench?.client.destroy();
    await dynamo?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  const started = (): Bench => {
    if (bench === undefined) throw new Error('the admin CLI bench is used outside a test');
    return bench;
  };

  async function admin(args: string[], options: AdminOptions = {}): Promise<AdminRun> {
    const { dynamo, dataDir, client, throttleStore } = started();
    const { accountsClock, auditTable } = options;
    const clock = accountsClock ?? systemClock;
    const stdout: string[] = [];
    const stderr: string[] = [];
    let passwordReads = 0;
    const code = await runAdmin(args, {
      env: { DYNAMODB_PORT: String(dynamo.port), DATA_DIR: dataDir, ...options.env },
      cwd: ROOT,
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
      readPassword: async () => {
        passwordReads += 1;
        return options.password ?? '';
      },
      ...(options.stdoutIsTTY !== undefined && { stdoutIsTTY: options.stdoutIsTTY }),
      ...(options.now && { now: options.now }),
      ...(options.parameters && { parameters: () => options.parameters as ParameterStore }),
      ...(options.stageParams && {
        stageParams: (stage: string) => ({ ...readStageParams(stage), ...options.stageParams }),
      }),
      ...((accountsClock ?? auditTable) !== undefined && {
        openStores: () => ({
          accounts: createDynamoAccountRepository({
            client,
            tableName: tableNames('local').accounts,
            clock,
          }),
          loginFailures: throttleStore,
          bulk: createBulkAccountStore({ client, tableName: tableNames('local').accounts, clock }),
          audit: createDynamoAuditTrail({ client, tableName: auditTable ?? tableNames('local').audit }),
          passkeys: createDynamoPasskeyStore({ client, tableName: tableNames('local').accounts }),
          policies: createDynamoSecurityPolicies({ client, tableName: tableNames('local').accounts }),
          close: () => {},
        }),
      }),
    });
    return { code, stdout: stdout.join('\n'), stderr, passwordReads };
  }

  async function adminOk(args: string[], options: AdminOptions = {}): Promise<AdminRun> {
    const run = await admin(args, options);
    if (run.code !== 0) {
      throw new Error(`arrange: admin ${args.join(' ')} exited ${run.code}: ${run.stderr.join(' | ')}`);
    }
    return run;
  }

  function spawnAdmin(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
    const { dynamo, dataDir } = started();
    // Nothing of the developer's AWS setup leaks into the child.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
    return runScript('ops/admin.ts', args, {
      env: { ...env, DYNAMODB_PORT: String(dynamo.port), DATA_DIR: dataDir, ...options.env },
      ...(options.stdin !== undefined && { stdin: options.stdin }),
    });
  }

  return {
    get endpoint() {
      return started().dynamo.endpoint;
    },
    get local() {
      return started().local;
    },
    get deployed() {
      return started().deployed;
    },
    get clients() {
      return started().clients;
    },
    get throttleStore() {
      return started().throttleStore;
    },
    get audit() {
      return started().audit;
    },
    get documentClient() {
      return started().client;
    },
    async counterSecret() {
      const { keyringFile } = await ensureLocalKeys(started().dataDir);
      return counterSecretOf(parseKeyring(await readFile(keyringFile, 'utf8')));
    },
    admin,
    adminOk,
    spawnAdmin,
  };
}
