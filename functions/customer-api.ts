import { readCustomerApiConfig } from '../lib/config.ts';
import { administratorOf } from '../lib/customer/administrator.ts';
import { listAdministrators, setAdministrator } from '../lib/customer/administrators.ts';
import {
  addSecret,
  auditEvents,
  createClient,
  getClient,
  listClients,
  removeClient,
  removeSecret,
  unlockClient,
  updateClient,
} from '../lib/customer/clients.ts';
import { endCustomerConnection, listConnections } from '../lib/customer/connections.ts';
import {
  AddPasskeySchema,
  addPasskey,
  listPasskeys,
  PasskeyParamsSchema,
  registrationOptions,
  removePasskey,
} from '../lib/customer/passkeys.ts';
import {
  AddSecretSchema,
  AdministratorSchema,
  AuditQuerySchema,
  ClientParamsSchema,
  ConnectionParamsSchema,
  CreateClientSchema,
  NoQuerySchema,
  SecretParamsSchema,
  UpdateClientSchema,
} from '../lib/customer/requests.ts';
import { readPolicy, SecurityPolicySchema, setPolicy } from '../lib/customer/security-policy.ts';
import { clientsView, clientView, eventView } from '../lib/customer/views.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { created, noContent, ok } from '../lib/http/responses.ts';
import { routes } from '../lib/http/router.ts';
import { relyingPartyOf } from '../lib/passkeys/webauthn.ts';
import { customerApiDeps } from '../lib/wiring/customer.ts';

const deps = await customerApiDeps(readCustomerApiConfig());
const common = {
  authorized: true,
  dpop: deps.dpop,
  metrics: deps.metrics,
  // Every call: the caller is an administrator of its token's customer now (lib/customer/administrator.ts).
  actor: (caller, sourceIp) => administratorOf(deps, caller, sourceIp),
  // Every route refuses a query parameter it does not take (audit-events takes two).
  query: NoQuerySchema,
} as const satisfies Pick<
  Parameters<typeof endpoint>[0],
  'authorized' | 'dpop' | 'metrics' | 'actor' | 'query'
>;
const now = () => deps.clock();
const clientUrl = (baseUrl: string, clientId: string) => `${baseUrl}/api/v1/customer/clients/${clientId}`;

/** /api/v1/customer/*: a customer's administrators manage its API clients (docs/administrators.md). */
export const handler = routes({
  customerListClients: endpoint({
    ...common,
    route: 'customerListClients',
    handle: async ({ actor }) => ok({ clients: clientsView(await listClients(deps, actor), now()) }),
  }),
  customerCreateClient: endpoint({
    ...common,
    route: 'customerCreateClient',
    body: CreateClientSchema,
    needsBaseUrl: true,
    handle: async ({ actor, body, baseUrl }) => {
      const made = await createClient(deps, actor, body);
      const client = clientView(made.client, now());
      return created(
        'clientSecret' in made
          ? { client, secretId: made.secretId, clientSecret: made.clientSecret }
          : { client },
        clientUrl(baseUrl, made.client.clientId),
      );
    },
  }),
  customerGetClient: endpoint({
    ...common,
    route: 'customerGetClient',
    params: ClientParamsSchema,
    handle: async ({ actor, params }) => ok(clientView(await getClient(deps, actor, params.clientId), now())),
  }),
  customerUpdateClient: endpoint({
    ...common,
    route: 'customerUpdateClient',
    params: ClientParamsSchema,
    body: UpdateClientSchema,
    handle: async ({ actor, params, body }) =>
      ok(clientView(await updateClient(deps, actor, params.clientId, body), now())),
  }),
  customerDeleteClient: endpoint({
    ...common,
    route: 'customerDeleteClient',
    params: ClientParamsSchema,
    handle: async ({ actor, params }) => {
      await removeClient(deps, actor, params.clientId);
      return noContent();
    },
  }),
  customerAddSecret: endpoint({
    ...common,
    route: 'customerAddSecret',
    params: ClientParamsSchema,
    body: AddSecretSchema,
    bodyOptional: true,
    needsBaseUrl: true,
    handle: async ({ actor, params, body, baseUrl }) => {
      const made = await addSecret(deps, actor, params.clientId, body);
      const client = clientView(made.client, now());
      return created(
        'clientSecret' in made
          ? { client, secretId: made.secretId, clientSecret: made.clientSecret }
          : { client, secretId: made.secretId },
        clientUrl(baseUrl, params.clientId),
      );
    },
  }),
  customerDeleteSecret: endpoint({
    ...common,
    route: 'customerDeleteSecret',
    params: SecretParamsSchema,
    handle: async ({ actor, params }) => {
      await removeSecret(deps, actor, params.clientId, params.secretId);
      return noContent();
    },
  }),
  customerUnlockClient: endpoint({
    ...common,
    route: 'customerUnlockClient',
    params: ClientParamsSchema,
    handle: async ({ actor, params }) => {
      await unlockClient(deps, actor, params.clientId);
      return noContent();
    },
  }),
  customerAuditEvents: endpoint({
    ...common,
    route: 'customerAuditEvents',
    query: AuditQuerySchema,
    handle: async ({ actor, query }) => {
      const page = await auditEvents(deps, actor, query);
      return ok({ events: page.events.map(eventView), next: page.next ?? null });
    },
  }),
  customerListAdministrators: endpoint({
    ...common,
    route: 'customerListAdministrators',
    handle: async ({ actor }) => {
      const usernames = await listAdministrators(deps, actor);
      return ok({ administrators: usernames.map((username) => ({ username })) });
    },
  }),
  customerGrantAdministrator: endpoint({
    ...common,
    route: 'customerGrantAdministrator',
    body: AdministratorSchema,
    handle: async ({ actor, body }) => {
      await setAdministrator(deps, actor, body.username, true);
      return noContent();
    },
  }),
  customerListConnections: endpoint({
    ...common,
    route: 'customerListConnections',
    handle: async ({ actor }) => ok({ connections: await listConnections(deps.connections, actor) }),
  }),
  customerEndConnection: endpoint({
    ...common,
    route: 'customerEndConnection',
    params: ConnectionParamsSchema,
    handle: async ({ actor, params }) => {
      await endCustomerConnection(deps.connections, actor, params.connectionId);
      return noContent();
    },
  }),
  customerListPasskeys: endpoint({
    ...common,
    route: 'customerListPasskeys',
    handle: async ({ actor }) => ok({ passkeys: await listPasskeys(deps.passkeys, actor) }),
  }),
  customerPasskeyOptions: endpoint({
    ...common,
    route: 'customerPasskeyOptions',
    needsBaseUrl: true,
    handle: async ({ actor, baseUrl }) =>
      ok(await registrationOptions(deps.passkeys, actor, relyingPartyOf(baseUrl))),
  }),
  customerAddPasskey: endpoint({
    ...common,
    route: 'customerAddPasskey',
    body: AddPasskeySchema,
    needsBaseUrl: true,
    handle: async ({ actor, body, baseUrl }) => {
      const passkey = await addPasskey(deps.passkeys, actor, relyingPartyOf(baseUrl), body);
      return created(passkey, `${baseUrl}/api/v1/customer/passkeys/${passkey.passkeyId}`);
    },
  }),
  customerRemovePasskey: endpoint({
    ...common,
    route: 'customerRemovePasskey',
    params: PasskeyParamsSchema,
    handle: async ({ actor, params }) => {
      await removePasskey(deps.passkeys, actor, params.passkeyId);
      return noContent();
    },
  }),
  customerGetSecurityPolicy: endpoint({
    ...common,
    route: 'customerGetSecurityPolicy',
    handle: async ({ actor }) => ok(await readPolicy(deps, actor)),
  }),
  customerSetSecurityPolicy: endpoint({
    ...common,
    route: 'customerSetSecurityPolicy',
    body: SecurityPolicySchema,
    handle: async ({ actor, body }) => ok(await setPolicy(deps, actor, body)),
  }),
  customerRevokeAdministrator: endpoint({
    ...common,
    route: 'customerRevokeAdministrator',
    body: AdministratorSchema,
    handle: async ({ actor, body }) => {
      await setAdministrator(deps, actor, body.username, false);
      return noContent();
    },
  }),
});
