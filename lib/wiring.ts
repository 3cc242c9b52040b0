// Each function's dependencies, built at module scope (top-level await), so clients, keys and the dummy
// hash exist before the first request; key material is re-read every `keys.reloadMs`.

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoAccountRepository, createDynamoAdministrations } from './accounts/dynamodb.ts';
import { createDynamoSessionTokenRevoker, createDynamoStatusReader } from './accounts/dynamodb-status.ts';
import { createDynamoAuditTrail } from './audit/dynamodb.ts';
import { createAuditRecorder, createClientAuthAudit, logAuditFailure } from './audit/recorder.ts';
import type { AuthorizerDeps } from './auth/authorizer.ts';
import type { LoginDeps } from './auth/login.ts';
import { createPasswordVerifier } from './auth/passwords.ts';
import { createDocumentClient, type DataSettings } from './aws/dynamodb.ts';
import { type Reloading, reloading } from './cache.ts';
import type { ClientAuthDeps } from './clients/client-auth.ts';
import { createDynamoClientRepository } from './clients/dynamodb.ts';
import {
  createDynamoClientReader,
  createDynamoClientStatusReader,
  createDynamoClientTokenRevoker,
} from './clients/dynamodb-readers.ts';
import type { GrantDeps } from './clients/grant.ts';
import type { IntrospectDeps } from './clients/introspect.ts';
import type { RevokeDeps } from './clients/revoke.ts';
import type {
  AuthorizerConfig,
  CustomerApiConfig,
  JwksConfig,
  LoginConfig,
  LogoutConfig,
  OAuthIntrospectConfig,
  OAuthRevokeConfig,
  OAuthTokenConfig,
  RefreshConfig,
  ShipmentsConfig,
} from './config.ts';
import type { AdministrationDeps } from './customer/administration.ts';
import { describeError, logger } from './log.ts';
import { createEmfMetrics, type FlushingMetrics } from './metrics/powertools.ts';
import type { QuotaPolicy } from './quota.ts';
import { createRevocationCheck } from './revocation/revocation.ts';
import { createDynamoSessionStore } from './sessions/dynamodb.ts';
import type { LogoutDeps, RefreshDeps, SessionDeps } from './sessions/sessions.ts';
import { createDynamoShipmentRepository } from './shipments/dynamodb.ts';
import type { ShipmentDeps } from './shipments/shipments.ts';
import { quotaPolicies } from './throttle/counters.ts';
import { createDynamoThrottleStore } from './throttle/dynamodb.ts';
import { createLoginThrottle } from './throttle/login-throttle.ts';
import { systemClock } from './time.ts';
import { createClientTokenIssuer, createTokenIssuer } from './tokens/issue.ts';
import {
  counterSecretOf,
  importSigningKey,
  importVerificationKeys,
  type Jwks,
  type Keyring,
  type KeySettings,
  type KeySource,
  parseJwks,
  parseKeyring,
  readKeyMaterial,
  type SigningKey,
  type VerificationKeys,
} from './tokens/keys.ts';
import { createAccessTokenVerifier, createRefreshTokenVerifier } from './tokens/verify.ts';

/** One per container, so every store shares one connection pool and one cold TLS handshake. */
const clients = new Map<string, DynamoDBDocumentClient>();
export function documentClient(data: DataSettings): DynamoDBDocumentClient {
  const key = `${data.region} ${data.dynamodbEndpoint ?? ''}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = createDocumentClient(data);
    clients.set(key, client);
  }
  return client;
}

/** Re-read every `reloadMs`; converted again only when it changed. */
function keyMaterial<T>(
  source: KeySource,
  region: string,
  reloadMs: number,
  convert: (text: string) => Promise<T>,
): Promise<Reloading<T>> {
  let last: { text: string; value: T } | undefined;
  return reloading(
    async () => {
      const text = await readKeyMaterial(source, region);
      if (last?.text !== text) last = { text, value: await convert(text) };
      return last.value;
    },
    {
      maxAgeMs: reloadMs,
      onError: (error) => logger.warn('key material reload failed', { error: describeError(error) }),
    },
  );
}

interface SigningKeyring {
  readonly keyring: Keyring;
  readonly signingKey: SigningKey;
}

const signingKeyring = (keys: KeySettings<{ signingKeyring: KeySource }>, region: string) =>
  keyMaterial<SigningKeyring>(keys.sources.signingKeyring, region, keys.reloadMs, async (text) => {
    const keyring = parseKeyring(text);
    return { keyring, signingKey: await importSigningKey(keyring.active) };
  });

const verificationKeys = (keys: KeySettings<{ verificationKeys: KeySource }>, region: string) =>
  keyMaterial<VerificationKeys>(keys.sources.verificationKeys, region, keys.reloadMs, (text) =>
    importVerificationKeys(parseJwks(text)),
  );

const accounts = (data: DataSettings, tableName: string) =>
  createDynamoAccountRepository({ client: documentClient(data), tableName });

const sessionStore = (data: DataSettings, tableName: string) =>
  createDynamoSessionStore({ client: documentClient(data), tableName });

export interface Measured {
  readonly metrics: FlushingMetrics;
}

const emfMetrics = (stage: string) => createEmfMetrics({ stage, logger });

/** What a function's answers publish (RateLimit-Policy, lib/http/rate-limit.ts). */
export interface Published {
  readonly limits: readonly QuotaPolicy[];
}

/**
 * The limits a login (or, with `client`, the token endpoint) publishes: its failure counters',
 * then the ones in front of the function (API Gateway's route rate, the web ACL's).
 */
export const publishedLimits = (
  config: Pick<LoginConfig | OAuthTokenConfig, 'throttle' | 'gatewayLimits'>,
  client: boolean,
): readonly QuotaPolicy[] => [...quotaPolicies(config.throttle, client), ...config.gatewayLimits];

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

async function loginThrottle(
  config: LoginConfig | OAuthTokenConfig | OAuthRevokeConfig,
  keyring: () => Promise<SigningKeyring>,
  metrics: FlushingMetrics,
) {
  return createLoginThrottle({
    store: createDynamoThrottleStore({
      client: documentClient(config.data),
      tableName: config.loginThrottleTable,
    }),
    settings: config.throttle,
    // Read once: keys rotate and keys revoke keep it.
    counterSecret: counterSecretOf((await keyring()).keyring),
    logger,
    metrics,
  });
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
async function clientAuthDeps(
  config: OAuthTokenConfig | OAuthRevokeConfig,
  keyring: () => Promise<SigningKeyring>,
  metrics: FlushingMetrics,
): Promise<ClientAuthDeps> {
  return {
    clients: createDynamoClientReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    throttle: await loginThrottle(config, keyring, metrics),
    logger,
    metrics,
    audit: createClientAuthAudit(
      createAuditRecorder({
        trail: createDynamoAuditTrail({ client: documentClient(config.data), tableName: config.audit.table }),
        retentionSeconds: config.audit.retentionSeconds,
        metrics,
        warn: logAuditFailure(logger),
      }),
    ),
  };
}

export async function oauthTokenDeps(config: OAuthTokenConfig): Promise<GrantDeps & Measured & Published> {
  const metrics = emfMetrics(config.stage);
  const keyring = await signingKeyring(config.keys, config.data.region);
  return {
    ...(await clientAuthDeps(config, keyring, metrics)),
    tokens: createClientTokenIssuer({
      signingKey: async () => (await keyring()).signingKey,
      settings: config.tokens,
    }),
    metrics,
    limits: publishedLimits(config, true),
  };
}

/** The authorizer's revocation check: users' and clients' state, trusted for `revocationCacheTtlMs`. */
const revocationCheck = (config: AuthorizerConfig | OAuthIntrospectConfig, metrics: FlushingMetrics) =>
  createRevocationCheck({
    users: createDynamoStatusReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    clients: createDynamoClientStatusReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    cacheTtlMs: config.revocationCacheTtlMs,
    metrics,
  });

/** The authorizer's verifier of access tokens, for the endpoints that answer about a token. */
const accessTokenVerifier = async (config: AuthorizerConfig | OAuthRevokeConfig) =>
  createAccessTokenVerifier({
    keys: await verificationKeys(config.keys, config.data.region),
    settings: config.tokens,
  });

export async function oauthRevokeDeps(config: OAuthRevokeConfig): Promise<RevokeDeps & Measured> {
  const metrics = emfMetrics(config.stage);
  // The keyring only for the throttle's counter secret: these endpoints sign nothing.
  const keyring = await signingKeyring(config.keys, config.data.region);
  return {
    ...(await clientAuthDeps(config, keyring, metrics)),
    verifier: await accessTokenVerifier(config),
    revoker: createDynamoClientTokenRevoker({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    metrics,
  };
}

export async function oauthIntrospectDeps(config: OAuthIntrospectConfig): Promise<IntrospectDeps & Measured> {
  const metrics = emfMetrics(config.stage);
  const keyring = await signingKeyring(config.keys, config.data.region);
  return {
    ...(await clientAuthDeps(config, keyring, metrics)),
    verifier: await accessTokenVerifier(config),
    revocation: revocationCheck(config, metrics),
    metrics,
  };
}

export async function refreshDeps(config: RefreshConfig): Promise<RefreshDeps & Measured & Published> {
  return {
    ...sessionDeps(config, await signingKeyring(config.keys, config.data.region)),
    users: accounts(config.data, config.accountsTable),
    accessTtlSeconds: config.tokens.accessTtlSeconds,
    refreshTokens: createRefreshTokenVerifier({
      keys: await verificationKeys(config.keys, config.data.region),
      settings: config.tokens,
    }),
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
    refreshTokens: createRefreshTokenVerifier({
      keys: await verificationKeys(config.keys, config.data.region),
      settings: config.tokens,
    }),
    metrics: emfMetrics(config.stage),
  };
}

export async function authorizerDeps(config: AuthorizerConfig): Promise<AuthorizerDeps & Measured> {
  const metrics = emfMetrics(config.stage);
  return {
    verifier: await accessTokenVerifier(config),
    revocation: revocationCheck(config, metrics),
    logger,
    metrics,
  };
}

// A client may cache the key set until this container would reload it: no copy is older than one
// reload interval, the bound `keys rotate` waits out.
export async function jwksDeps(
  config: JwksConfig,
): Promise<{ jwks: () => Promise<{ keys: Jwks; maxAgeSeconds: number }> }> {
  const { reloadMs, sources } = config.keys;
  const current = await keyMaterial(sources.verificationKeys, config.region, reloadMs, async (text) =>
    parseJwks(text),
  );
  return {
    async jwks() {
      const keys = await current();
      const remainingMs = current.loadedAt() + reloadMs - Date.now();
      return { keys, maxAgeSeconds: Math.max(0, Math.floor(remainingMs / 1000)) };
    },
  };
}

/** The self-service API's stores on `client` (the template test gives one that records its requests). */
export const administrationStores = (
  client: DynamoDBDocumentClient,
  config: CustomerApiConfig,
  counterSecret: () => Promise<Uint8Array>,
): Pick<AdministrationDeps, 'administrations' | 'clients' | 'audit' | 'auditRetentionSeconds' | 'locks'> => ({
  administrations: createDynamoAdministrations({ client, tableName: config.accountsTable }),
  clients: createDynamoClientRepository({ client, tableName: config.accountsTable }),
  audit: createDynamoAuditTrail({ client, tableName: config.audit.table }),
  auditRetentionSeconds: config.audit.retentionSeconds,
  locks: {
    store: createDynamoThrottleStore({ client, tableName: config.loginThrottleTable }),
    rules: {
      usernameThrottle: config.throttle.username,
      knownSourceSeconds: config.throttle.knownSourceSeconds,
    },
    counterSecret,
  },
});

/** The self-service API's dependencies on its stores: every change recorded through one recorder of their trail. */
export const administrationDeps = (
  stores: ReturnType<typeof administrationStores>,
  context: Pick<AdministrationDeps, 'logger' | 'metrics' | 'clock'>,
): AdministrationDeps => ({
  ...stores,
  recorder: createAuditRecorder({
    trail: stores.audit,
    retentionSeconds: stores.auditRetentionSeconds,
    metrics: context.metrics,
    warn: logAuditFailure(context.logger),
  }),
  ...context,
});

export async function customerApiDeps(config: CustomerApiConfig): Promise<AdministrationDeps & Measured> {
  // The keyring only for the throttle's counter secret (unlock): this function signs nothing.
  const keyring = await signingKeyring(config.keys, config.data.region);
  const stores = administrationStores(documentClient(config.data), config, async () =>
    counterSecretOf((await keyring()).keyring),
  );
  const metrics = emfMetrics(config.stage);
  return { ...administrationDeps(stores, { logger, metrics, clock: systemClock }), metrics };
}

export function shipmentDeps(config: ShipmentsConfig): ShipmentDeps {
  return {
    shipments: createDynamoShipmentRepository({
      client: documentClient(config.data),
      tableName: config.shipmentsTable,
    }),
  };
}
