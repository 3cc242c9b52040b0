import { createDynamoAccountRepository } from '../accounts/dynamodb.ts';
import { createDynamoSecurityPolicies } from '../accounts/dynamodb-policies.ts';
import { createPasswordVerifier } from '../auth/passwords.ts';
import type { AuthorizeDeps } from '../authorization/authorize.ts';
import { createDynamoAuthorizationStore } from '../authorization/dynamodb.ts';
import type { OAuthAuthorizeConfig } from '../config.ts';
import { createDynamoConnectionStore } from '../connections/dynamodb.ts';
import { logger } from '../log.ts';
import { createDynamoChallengeStore, createDynamoPasskeyStore } from '../passkeys/dynamodb.ts';
import { auditRecorder, clientAuthDeps } from './oauth.ts';
import { documentClient, emfMetrics, type Measured, signingKeyring } from './shared.ts';
import { loginThrottle } from './throttle.ts';

/** The authorization endpoint and PAR: a platform's read, its requests and codes, the page's sign-in. */
export async function oauthAuthorizeDeps(config: OAuthAuthorizeConfig): Promise<AuthorizeDeps & Measured> {
  const metrics = emfMetrics(config.stage);
  const keyring = await signingKeyring(config.keys, config.data.region);
  const client = documentClient(config.data);
  const accounts = { client, tableName: config.accountsTable };
  const recorder = auditRecorder(config, metrics);
  const clientAuth = await clientAuthDeps(config, keyring, metrics, recorder);
  const users = createDynamoAccountRepository(accounts);
  return {
    clients: clientAuth.clients,
    clientAuth,
    store: createDynamoAuthorizationStore({ client, tableName: config.sessionsTable }),
    connections: createDynamoConnectionStore(accounts),
    policies: createDynamoSecurityPolicies(accounts),
    recorder,
    credentials: {
      users,
      passwords: createPasswordVerifier({ cost: config.bcryptCost }),
      sessions: {},
      throttle: await loginThrottle(config, keyring, metrics),
      logger,
      metrics,
    },
    passkeys: {
      users,
      passkeys: createDynamoPasskeyStore(accounts),
      challenges: createDynamoChallengeStore({ client, tableName: config.sessionsTable }),
      logger,
      metrics,
    },
    issuer: config.issuer,
    logger,
    metrics,
  };
}
