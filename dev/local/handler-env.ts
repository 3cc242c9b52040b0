/**
 * The environment serverless.yml gives the functions (every function's, on a stage that sets
 * no parameters of its own), pointed at a test DynamoDB and test key files. Composed from
 * lib/settings.ts as serverless.yml composes it (infra/function-env.ts), so a setting added there
 * reaches the tests without a second copy. Handlers read it once at import, so tests set it
 * before importing them.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionEnvironment, functionNames } from '../../infra/function-env.ts';
import { counterSecretOf, parseKeyring } from '../../lib/tokens/keys.ts';
import { ensureLocalKeys } from '../../ops/keys/local.ts';

/** What every function of serverless.yml gets on a stage with the default parameters. */
export const stageEnv = (stage = 'test'): Record<string, string> =>
  Object.assign({}, ...functionNames().map((name) => functionEnvironment(name, stage, {})));

export async function functionEnv(options: {
  endpoint: string;
  tables: { accounts: string; shipments: string; sessions: string; loginThrottle: string; audit: string };
}) {
  const keyDir = await mkdtemp(join(tmpdir(), 'parcel-auth-keys-'));
  const keys = await ensureLocalKeys(keyDir);
  const env: Record<string, string> = {
    ...stageEnv(),
    AWS_REGION: 'eu-central-1',
    // Expected warnings stay out of the test output; tests that want lines capture them.
    LOG_LEVEL: 'warn',
    // So do the metric lines (EMF on stdout); tests/integration/metrics.test.ts turns them on.
    POWERTOOLS_METRICS_DISABLED: 'true',
    // The fastest bcrypt, and no revocation cache, so a test sees its own revocation at once.
    BCRYPT_COST: '4',
    REVOCATION_CACHE_TTL: '0s',
    ACCOUNTS_TABLE: options.tables.accounts,
    SHIPMENTS_TABLE: options.tables.shipments,
    SESSIONS_TABLE: options.tables.sessions,
    LOGIN_THROTTLE_TABLE: options.tables.loginThrottle,
    AUDIT_TABLE: options.tables.audit,
    DYNAMODB_ENDPOINT: options.endpoint,
    SIGNING_KEYRING: `file:${keys.keyringFile}`,
    VERIFICATION_KEYS: `file:${keys.jwksFile}`,
  };
  /** Removes the test key files. */
  const cleanup = () => rm(keyDir, { recursive: true, force: true });
  /** The secret the functions key the username counters with. */
  const counterSecret = counterSecretOf(parseKeyring(await readFile(keys.keyringFile, 'utf8')));
  return { env, cleanup, counterSecret };
}
