import { createDynamoSecurityPolicies } from '../accounts/dynamodb-policies.ts';
import { createDynamoAuditTrail } from '../audit/dynamodb.ts';
import {
  type AuditRecorder,
  createAuditRecorder,
  createClientAuthAudit,
  logAuditFailure,
} from '../audit/recorder.ts';
import { createDynamoAuthorizationStore } from '../authorization/dynamodb.ts';
import type { PlatformGrantDeps } from '../authorization/grants.ts';
import { expiringCache } from '../cache.ts';
import type { ClientAuthDeps } from '../clients/client-auth.ts';
import { createDynamoClientReader, createDynamoClientTokenRevoker } from '../clients/dynamodb-readers.ts';
import type { GrantDeps } from '../clients/grant.ts';
import type { IntrospectDeps } from '../clients/introspect.ts';
import type { RevokeDeps } from '../clients/revoke.ts';
import type {
  OAuthAuthorizeConfig,
  OAuthIntrospectConfig,
  OAuthRevokeConfig,
  OAuthTokenConfig,
} from '../config.ts';
import { createDynamoConnectionStore } from '../connections/dynamodb.ts';
import { DPOP_POLICY_CACHE_SECONDS } from '../dpop/binding.ts';
import { logger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { ASSERTION_PREFIX, createDynamoReplayStore, DPOP_PREFIX } from '../replay/dynamodb.ts';
import { createDynamoSessionStore } from '../sessions/dynamodb.ts';
import { createClientTokenIssuer, createConnectionTokenIssuer } from '../tokens/issue.ts';
import { createConnectionRefreshTokenVerifier } from '../tokens/verify.ts';
import { revocationCheck } from './authorizer.ts';
import {
  accessTokenVerifier,
  documentClient,
  emfMetrics,
  type Measured,
  type Published,
  type SigningKeyring,
  signingKeyring,
  verificationKeys,
} from './shared.ts';
import { loginThrottle, publishedLimits } from './throttle.ts';

type ClientAuthConfig = OAuthTokenConfig | OAuthRevokeConfig | OAuthIntrospectConfig | OAuthAuthorizeConfig;

/** The customers' audit trail, as these functions write it (failed authentications, connections). */
export const auditRecorder = (config: ClientAuthConfig, metrics: FlushingMetrics): AuditRecorder =>
  createAuditRecorder({
    trail: createDynamoAuditTrail({ client: documentClient(config.data), tableName: config.audit.table }),
    retentionSeconds: config.audit.retentionSeconds,
    metrics,
    warn: logAuditFailure(logger),
  });

export async function clientAuthDeps(
  config: ClientAuthConfig,
  keyring: () => Promise<SigningKeyring>,
  metrics: FlushingMetrics,
  recorder: AuditRecorder = auditRecorder(config, metrics),
): Promise<ClientAuthDeps> {
  return {
    clients: createDynamoClientReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    throttle: await loginThrottle(config, keyring, metrics),
    logger,
    metrics,
    audit: createClientAuthAudit(recorder),
    assertions: {
      replay: createDynamoReplayStore(
        { client: documentClient(config.data), tableName: config.sessionsTable },
        ASSERTION_PREFIX,
      ),
      issuer: 'issuer' in config ? config.issuer : config.tokens.issuer,
    },
  };
}

export async function oauthTokenDeps(
  config: OAuthTokenConfig,
): Promise<GrantDeps & Measured & Published & { readonly platforms: PlatformGrantDeps }> {
  const metrics = emfMetrics(config.stage);
  const keyring = await signingKeyring(config.keys, config.data.region);
  const client = documentClient(config.data);
  const accounts = { client, tableName: config.accountsTable };
  const signingKey = async () => (await keyring()).signingKey;
  const recorder = auditRecorder(config, metrics);
  const clientAuth = await clientAuthDeps(config, keyring, metrics, recorder);
  const policies = createDynamoSecurityPolicies(accounts);
  const rules = expiringCache<string, boolean>({
    ttlMs: DPOP_POLICY_CACHE_SECONDS * 1000,
    maxEntries: 1000,
  });
  const dpop = {
    replay: createDynamoReplayStore({ client, tableName: config.sessionsTable }, DPOP_PREFIX),
    customerRequiresDpop: (customerId: string) =>
      rules.get(customerId, async () => (await policies.find(customerId)).shipmentsWriteRequiresDpop),
  };
  return {
    ...clientAuth,
    tokens: createClientTokenIssuer({ signingKey, settings: config.tokens }),
    dpop,
    metrics,
    limits: publishedLimits(config, true),
    platforms: {
      ...clientAuth,
      codes: createDynamoAuthorizationStore({ client, tableName: config.sessionsTable }),
      connections: createDynamoConnectionStore(accounts),
      recorder,
      sessions: createDynamoSessionStore({ client, tableName: config.sessionsTable }),
      sessionSettings: config.connections,
      tokens: createConnectionTokenIssuer({ signingKey, settings: config.tokens }),
      refreshTokens: createConnectionRefreshTokenVerifier({
        keys: await verificationKeys(config.keys, config.data.region),
        settings: config.tokens,
      }),
      dpop,
    },
  };
}

/** The authorizer's revocation check: users' and clients' state, trusted for `revocationCacheTtlMs`. */
export async function oauthRevokeDeps(config: OAuthRevokeConfig): Promise<RevokeDeps & Measured> {
  const metrics = emfMetrics(config.stage);
  // The keyring only for the throttle's counter secret: these endpoints sign nothing.
  const keyring = await signingKeyring(config.keys, config.data.region);
  const accounts = { client: documentClient(config.data), tableName: config.accountsTable };
  const recorder = auditRecorder(config, metrics);
  return {
    ...(await clientAuthDeps(config, keyring, metrics, recorder)),
    verifier: await accessTokenVerifier(config),
    revoker: createDynamoClientTokenRevoker(accounts),
    connections: {
      refreshTokens: createConnectionRefreshTokenVerifier({
        keys: await verificationKeys(config.keys, config.data.region),
        settings: { ...config.tokens, refreshTtlSeconds: config.refreshTtlSeconds },
      }),
      store: createDynamoConnectionStore(accounts),
      recorder,
    },
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
