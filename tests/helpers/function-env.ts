/**
 * The environment serverless.yml gives the functions, pointed at a test DynamoDB and test
 * key files. Handlers read it once at import, so tests set it before importing them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureLocalKeys } from '../../scripts/local/keys.ts';

/** The brute-force limits of serverless.yml's default stage parameters. */
export const THROTTLE_ENV = {
  LOGIN_FAILURE_LIMIT: '5',
  LOGIN_FAILURE_WINDOW: '24h',
  IP_FAILURE_LIMIT: '100',
  IP_FAILURE_WINDOW: '1h',
  LOGIN_LOCKOUT_BASE: '30s',
  LOGIN_LOCKOUT_MAX: '15m',
} as const;

export async function functionEnv(options: {
  endpoint: string;
  tables: { accounts: string; shipments: string; sessions: string; loginGuard: string };
}) {
  const keyDir = await mkdtemp(join(tmpdir(), 'parcel-auth-keys-'));
  const keys = await ensureLocalKeys(keyDir);
  const env: Record<string, string> = {
    STAGE: 'test',
    AWS_REGION: 'eu-central-1',
    LOG_LEVEL: 'warn',
    TOKEN_ISSUER: 'https://auth.test.example/test',
    TOKEN_AUDIENCE: 'https://api.test.example/test',
    ACCESS_TOKEN_TTL: '1h',
    REFRESH_TOKEN_TTL: '30d',
    KEY_RELOAD_INTERVAL: '5m',
    SESSION_MAX_LIFETIME: '90d',
    REFRESH_REUSE_GRACE: '0s',
    REVOCATION_CACHE_TTL: '0s',
    ACCOUNTS_TABLE: options.tables.accounts,
    SHIPMENTS_TABLE: options.tables.shipments,
    SESSIONS_TABLE: options.tables.sessions,
    DYNAMODB_ENDPOINT: options.endpoint,
    SIGNING_KEYRING: `file:${keys.keyringFile}`,
    VERIFICATION_KEYS: `file:${keys.jwksFile}`,
    BCRYPT_COST: '4',
    LOGIN_GUARD_TABLE: options.tables.loginGuard,
    ...THROTTLE_ENV,
  };
  /** Removes the test key files. */
  const cleanup = () => rm(keyDir, { recursive: true, force: true });
  return { env, cleanup };
}
