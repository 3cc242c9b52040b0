/**
 * Which stack the admin CLI acts on. Without `--stage` it is the local stack of `npm start`:
 * the embedded DynamoDB on loopback (dummy credentials) and the key files under DATA_DIR.
 * With `--stage <name>` it is a deployed stage: that stage's tables through the usual AWS
 * credential chain, with no endpoint override, so AWS_ENDPOINT_URL(_DYNAMODB) still apply.
 */
import { resolve } from 'node:path';
import * as v from 'valibot';
import { LocalStackLocationSchema } from '../../infra/local-stage.ts';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { createDynamoSecurityPolicies } from '../../lib/accounts/dynamodb-policies.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import type { AuditTrail } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import type { Env } from '../../lib/config.ts';
import type { SecurityPolicies } from '../../lib/customer/administration.ts';
import { createDynamoPasskeyStore } from '../../lib/passkeys/dynamodb.ts';
import type { PasskeyStore } from '../../lib/passkeys/store.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import { type BulkAccountStore, createBulkAccountStore } from '../accounts/bulk-dynamodb.ts';
import { usageError } from './errors.ts';
import type { TargetOptions } from './parse.ts';

export const LOCAL_STAGE = 'local';
export const DEFAULT_REGION = 'eu-central-1';

export type Target =
  | {
      readonly kind: 'local';
      readonly stage: typeof LOCAL_STAGE;
      readonly region: string;
      readonly endpoint: string;
      readonly dataDir: string;
    }
  | { readonly kind: 'aws'; readonly stage: string; readonly region: string };

const AwsEnvSchema = v.object({
  AWS_REGION: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty')), DEFAULT_REGION),
});

function parseEnv<TSchema extends v.GenericSchema>(schema: TSchema, env: Env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const [issue] = result.issues;
  throw usageError(`environment variable ${v.getDotPath(issue) ?? '(unknown)'} ${issue.message}`);
}

/**
 * The target of an invocation. `--stage local` is the local stack too: the local stage's
 * tables exist only in the embedded DynamoDB.
 */
export function resolveTarget(options: TargetOptions, env: Env, cwd: string): Target {
  if (options.stage === undefined || options.stage === LOCAL_STAGE) {
    const local = parseEnv(LocalStackLocationSchema, env);
    return {
      kind: 'local',
      stage: LOCAL_STAGE,
      region: 'local',
      endpoint: local.DYNAMODB_ENDPOINT?.replace(/\/$/, '') ?? `http://127.0.0.1:${local.DYNAMODB_PORT}`,
      dataDir: resolve(cwd, local.DATA_DIR),
    };
  }
  const region = options.region ?? parseEnv(AwsEnvSchema, env).AWS_REGION;
  return { kind: 'aws', stage: options.stage, region };
}

export interface OpenedStores {
  readonly accounts: AccountRepository;
  /** The failed-login counters of the login throttle (the login-throttle table). */
  readonly loginFailures: ThrottleStore;
  /** The accounts table in bulk: import, export, listings; it carries the API clients too. */
  readonly bulk: BulkAccountStore;
  /** The audit trail (the audit table). */
  readonly audit: AuditTrail;
  /** The users' passkeys (on the accounts table). */
  readonly passkeys: PasskeyStore;
  /** The customers' security policies (on the accounts table). */
  readonly policies: SecurityPolicies;
  /** Lets the process exit without waiting for idle connections. */
  close(): void;
}

/** The stores of a target, on DynamoDB, sharing one document client. */
export function openDynamoStores(target: Target): OpenedStores {
  const client = createDocumentClient({
    region: target.region,
    dynamodbEndpoint: target.kind === 'local' ? target.endpoint : undefined,
  });
  const tables = tableNames(target.stage);
  return {
    accounts: createDynamoAccountRepository({ client, tableName: tables.accounts }),
    loginFailures: createDynamoThrottleStore({ client, tableName: tables.loginThrottle }),
    bulk: createBulkAccountStore({ client, tableName: tables.accounts }),
    audit: createDynamoAuditTrail({ client, tableName: tables.audit }),
    passkeys: createDynamoPasskeyStore({ client, tableName: tables.accounts }),
    policies: createDynamoSecurityPolicies({ client, tableName: tables.accounts }),
    // The document client shares its request handler with the client it wraps.
    close: () => client.config.requestHandler.destroy?.(),
  };
}
