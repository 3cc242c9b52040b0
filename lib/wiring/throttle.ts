import type { LoginConfig, OAuthTokenConfig } from '../config.ts';
import { logger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import type { QuotaPolicy } from '../quota.ts';
import { quotaPolicies } from '../throttle/counters.ts';
import { createDynamoThrottleStore } from '../throttle/dynamodb.ts';
import { createLoginThrottle } from '../throttle/login-throttle.ts';
import { counterSecretOf } from '../tokens/keys.ts';

import { documentClient, type SigningKeyring } from './shared.ts';

/**
 * The limits a login (or, with `client`, the token endpoint) publishes: its failure counters',
 * then the ones in front of the function (API Gateway's route rate, the web ACL's).
 */
export const publishedLimits = (
  config: Pick<LoginConfig | OAuthTokenConfig, 'throttle' | 'gatewayLimits'>,
  client: boolean,
): readonly QuotaPolicy[] => [...quotaPolicies(config.throttle, client), ...config.gatewayLimits];

export async function loginThrottle(
  config: Pick<LoginConfig, 'data' | 'loginThrottleTable' | 'throttle'>,
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
