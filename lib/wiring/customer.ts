/** The dependencies of the self-service API. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoAdministrations } from '../accounts/dynamodb.ts';
import { createDynamoSecurityPolicies } from '../accounts/dynamodb-policies.ts';
import { createDynamoAuditTrail } from '../audit/dynamodb.ts';
import { createAuditRecorder, logAuditFailure } from '../audit/recorder.ts';
import { createDynamoClientRepository } from '../clients/dynamodb.ts';
import type { CustomerApiConfig } from '../config.ts';
import { createDynamoConnectionStore } from '../connections/dynamodb.ts';
import type { AdministrationDeps } from '../customer/administration.ts';
import type { CustomerConnectionDeps } from '../customer/connections.ts';
import type { PasskeyDeps } from '../customer/passkeys.ts';
import type { BindingDeps } from '../dpop/binding.ts';
import { logger } from '../log.ts';
import { createDynamoChallengeStore, createDynamoPasskeyStore } from '../passkeys/dynamodb.ts';
import { createDynamoThrottleStore } from '../throttle/dynamodb.ts';
import { systemClock } from '../time.ts';
import { counterSecretOf } from '../tokens/keys.ts';
import { documentClient, dpopDeps, emfMetrics, type Measured, signingKeyring } from './shared.ts';

/** The self-service API's stores on `client` (the template test gives one that records its requests). */
export const administrationStores = (
  client: DynamoDBDocumentClient,
  config: CustomerApiConfig,
  counterSecret: () => Promise<Uint8Array>,
): Pick<
  AdministrationDeps,
  'administrations' | 'policies' | 'clients' | 'audit' | 'auditRetentionSeconds' | 'locks'
> => ({
  administrations: createDynamoAdministrations({ client, tableName: config.accountsTable }),
  policies: createDynamoSecurityPolicies({ client, tableName: config.accountsTable }),
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
    clock: context.clock,
  }),
  ...context,
});

export async function customerApiDeps(config: CustomerApiConfig): Promise<
  AdministrationDeps &
    Measured & {
      readonly connections: CustomerConnectionDeps;
      readonly passkeys: PasskeyDeps;
      readonly dpop: BindingDeps;
    }
> {
  // The keyring only for the throttle's counter secret (unlock): this function signs nothing.
  const keyring = await signingKeyring(config.keys, config.data.region);
  const stores = administrationStores(documentClient(config.data), config, async () =>
    counterSecretOf((await keyring()).keyring),
  );
  const metrics = emfMetrics(config.stage);
  const accounts = { client: documentClient(config.data), tableName: config.accountsTable };
  const administration = administrationDeps(stores, { logger, metrics, clock: systemClock });
  return {
    ...administration,
    metrics,
    dpop: dpopDeps({ client: accounts.client, tableName: config.sessionsTable }),
    connections: {
      recorder: administration.recorder,
      connections: createDynamoConnectionStore(accounts),
      platforms: stores.clients,
      clock: systemClock,
      logger,
      metrics,
    },
    passkeys: {
      passkeys: createDynamoPasskeyStore(accounts),
      challenges: createDynamoChallengeStore({ client: accounts.client, tableName: config.sessionsTable }),
      recorder: administration.recorder,
      clock: systemClock,
      logger,
      metrics,
    },
  };
}
