import { createDynamoAccountRepository } from '../accounts/dynamodb.ts';
import { createDynamoSessionTokenRevoker } from '../accounts/dynamodb-status.ts';
import type { LoginDeps } from '../auth/login.ts';
import { createPasswordVerifier } from '../auth/passwords.ts';
import type { DataSettings } from '../aws/dynamodb.ts';
import type { LoginConfig, LogoutConfig, RefreshConfig } from '../config.ts';
import { logger } from '../log.ts';
import { createDynamoSessionStore } from '../sessions/dynamodb.ts';
import type { LogoutDeps, RefreshDeps, SessionDeps } from '../sessions/sessions.ts';
import { createTokenIssuer } from '../tokens/issue.ts';
import { createRefreshTokenVerifier } from '../tokens/verify.ts';
import {
  documentClient,
  emfMetrics,
  type Measured,
  type Published,
  type SigningKeyring,
  signingKeyring,
  verificationKeys,
} from './shared.ts';
import { loginThrottle, publishedLimits } from './throttle.ts';

/** Refresh and logout verify the refresh token alike. */
const refreshTokenVerifier = async (config: RefreshConfig | LogoutConfig) =>
  createRefreshTokenVerifier({
    keys: await verificationKeys(config.keys, config.data.region),
    settings: config.tokens,
  });

const accounts = (data: DataSettings, tableName: string) =>
  createDynamoAccountRepository({ client: documentClient(data), tableName });

const sessionStore = (data: DataSettings, tableName: string) =>
  createDynamoSessionStore({ client: documentClient(data), tableName });

function sessionDeps(
  config: LoginConfig | RefreshConfig,
  keyring: () => Promise<SigningKeyring>,
): SessionDeps {
  return {
    store: sessionStore(config.data, config.sessionsTable),
    tokens: createTokenIssuer({
      signingKey: async () => (await keyring()).signingKey,
      settings: config.tokens,
    }),
    settings: config.sessions,
  };
}

export async function loginDeps(config: LoginConfig): Promise<LoginDeps & Measured & Published> {
  const metrics = emfMetrics(config.stage);
  const keyring = await signingKeyring(config.keys, config.data.region);
  return {
    users: accounts(config.data, config.accountsTable),
    passwords: createPasswordVerifier({ cost: config.bcryptCost }),
    sessions: sessionDeps(config, keyring),
    throttle: await loginThrottle(config, keyring, metrics),
    logger,
    metrics,
    limits: publishedLimits(config, false),
  };
}

/**
 * Client authentication at an OAuth endpoint: the client's consistent read, the login throttle,
 * and the audit trail its failures are recorded in.
 */
export async function refreshDeps(config: RefreshConfig): Promise<RefreshDeps & Measured & Published> {
  return {
    ...sessionDeps(config, await signingKeyring(config.keys, config.data.region)),
    users: accounts(config.data, config.accountsTable),
    accessTtlSeconds: config.tokens.accessTtlSeconds,
    refreshTokens: await refreshTokenVerifier(config),
    logger,
    metrics: emfMetrics(config.stage),
    // No counter of its own: only the limits in front of it.
    limits: config.gatewayLimits,
  };
}

export async function logoutDeps(config: LogoutConfig): Promise<LogoutDeps & Measured> {
  return {
    store: sessionStore(config.data, config.sessionsTable),
    users: createDynamoSessionTokenRevoker({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    accessTtlSeconds: config.tokens.accessTtlSeconds,
    refreshTokens: await refreshTokenVerifier(config),
    logger,
    metrics: emfMetrics(config.stage),
  };
}
