/** What every function's dependencies are built with, once per container: one DynamoDB client, key material re-read every `keys.reloadMs`, the EMF metrics, the access token verifier. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, type DataSettings } from '../aws/dynamodb.ts';
import type { Table } from '../aws/owned-items.ts';
import { type Reloading, reloading } from '../cache.ts';
import type { AuthorizerConfig, OAuthRevokeConfig } from '../config.ts';
import type { BindingDeps } from '../dpop/binding.ts';
import { describeError, logger } from '../log.ts';
import { createEmfMetrics, type FlushingMetrics } from '../metrics/powertools.ts';
import type { QuotaPolicy } from '../quota.ts';
import { createDynamoReplayStore, DPOP_PREFIX } from '../replay/dynamodb.ts';
import {
  importSigningKey,
  importVerificationKeys,
  type Keyring,
  type KeySettings,
  type KeySource,
  parseJwks,
  parseKeyring,
  readKeyMaterial,
  type SigningKey,
  type VerificationKeys,
} from '../tokens/keys.ts';
import { createAccessTokenVerifier } from '../tokens/verify.ts';

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

/** Where an authorized endpoint spends the DPoP proofs of bound tokens: the sessions table. */
export const dpopDeps = (sessions: Table): BindingDeps => ({
  replay: createDynamoReplayStore(sessions, DPOP_PREFIX),
});

/** Re-read every `reloadMs`; converted again only when it changed. */
export function keyMaterial<T>(
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

export interface SigningKeyring {
  readonly keyring: Keyring;
  readonly signingKey: SigningKey;
}

export const signingKeyring = (keys: KeySettings<{ signingKeyring: KeySource }>, region: string) =>
  keyMaterial<SigningKeyring>(keys.sources.signingKeyring, region, keys.reloadMs, async (text) => {
    const keyring = parseKeyring(text);
    return { keyring, signingKey: await importSigningKey(keyring.active) };
  });

export const verificationKeys = (keys: KeySettings<{ verificationKeys: KeySource }>, region: string) =>
  keyMaterial<VerificationKeys>(keys.sources.verificationKeys, region, keys.reloadMs, (text) =>
    importVerificationKeys(parseJwks(text)),
  );

export interface Measured {
  readonly metrics: FlushingMetrics;
}

export const emfMetrics = (stage: string) => createEmfMetrics({ stage, logger });

/** What a function's answers publish (RateLimit-Policy, lib/http/rate-limit.ts). */
export interface Published {
  readonly limits: readonly QuotaPolicy[];
}

export const accessTokenVerifier = async (config: AuthorizerConfig | OAuthRevokeConfig) =>
  createAccessTokenVerifier({
    keys: await verificationKeys(config.keys, config.data.region),
    settings: config.tokens,
  });
