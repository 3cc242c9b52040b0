/** The dependencies of the passkey sign-in (lib/auth/passkey-login.ts). */
import { createDynamoAccountRepository } from '../accounts/dynamodb.ts';
import type { PasskeyLoginDeps } from '../auth/passkey-login.ts';
import type { PasskeyLoginConfig } from '../config.ts';
import { logger } from '../log.ts';
import { createDynamoChallengeStore, createDynamoPasskeyStore } from '../passkeys/dynamodb.ts';
import { createDynamoSessionStore } from '../sessions/dynamodb.ts';
import { createTokenIssuer } from '../tokens/issue.ts';
import { documentClient, emfMetrics, type Measured, signingKeyring } from './shared.ts';

export async function passkeyLoginDeps(config: PasskeyLoginConfig): Promise<PasskeyLoginDeps & Measured> {
  const client = documentClient(config.data);
  const keyring = await signingKeyring(config.keys, config.data.region);
  return {
    users: createDynamoAccountRepository({ client, tableName: config.accountsTable }),
    passkeys: createDynamoPasskeyStore({ client, tableName: config.accountsTable }),
    challenges: createDynamoChallengeStore({ client, tableName: config.sessionsTable }),
    sessions: {
      store: createDynamoSessionStore({ client, tableName: config.sessionsTable }),
      tokens: createTokenIssuer({
        signingKey: async () => (await keyring()).signingKey,
        settings: config.tokens,
      }),
      settings: config.sessions,
    },
    logger,
    metrics: emfMetrics(config.stage),
  };
}
