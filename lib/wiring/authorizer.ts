import { createDynamoStatusReader } from '../accounts/dynamodb-status.ts';
import type { AuthorizerDeps } from '../auth/authorizer.ts';
import { createDynamoClientStatusReader } from '../clients/dynamodb-readers.ts';
import type { AuthorizerConfig, JwksConfig, OAuthIntrospectConfig } from '../config.ts';
import { createDynamoConnectionStatusReader } from '../connections/dynamodb.ts';
import { logger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { createRevocationCheck } from '../revocation/revocation.ts';
import { type Jwks, parseJwks } from '../tokens/keys.ts';

import { accessTokenVerifier, documentClient, emfMetrics, keyMaterial, type Measured } from './shared.ts';

export const revocationCheck = (config: AuthorizerConfig | OAuthIntrospectConfig, metrics: FlushingMetrics) =>
  createRevocationCheck({
    users: createDynamoStatusReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    clients: createDynamoClientStatusReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    connections: createDynamoConnectionStatusReader({
      client: documentClient(config.data),
      tableName: config.accountsTable,
    }),
    cacheTtlMs: config.revocationCacheTtlMs,
    metrics,
  });

/** The authorizer's verifier of access tokens, for the endpoints that answer about a token. */
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
