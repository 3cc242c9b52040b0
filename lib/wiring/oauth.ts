import { createDynamoAuditTrail } from '../audit/dynamodb.ts';
import { createAuditRecorder, createClientAuthAudit, logAuditFailure } from '../audit/recorder.ts';
import type { ClientAuthDeps } from '../clients/client-auth.ts';
import { createDynamoClientReader, createDynamoClientTokenRevoker } from '../clients/dynamodb-readers.ts';
import type { GrantDeps } from '../clients/grant.ts';
import type { IntrospectDeps } from '../clients/introspect.ts';
import type { RevokeDeps } from '../clients/revoke.ts';
import type { OAuthIntrospectConfig, OAuthRevokeConfig, OAuthTokenConfig } from '../config.ts';
import { logger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { createClientTokenIssuer } from '../tokens/issue.ts';
import { revocationCheck } from './authorizer.ts';
import {
  accessTokenVerifier,
  documentClient,
  emfMetrics,
  type Measured,
  type Published,
  type SigningKeyring,
  signingKeyring,
} from './shared.ts';
import { loginThrottle, publishedLimits } from './throttle.ts';

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
