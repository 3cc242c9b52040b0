import { readCustomerApiConfig } from '../lib/config.ts';
import {
  addSecret,
  administratorOf,
  auditEvents,
  createClient,
  getClient,
  listAdministrators,
  listClients,
  removeClient,
  removeSecret,
  setAdministrator,
  unlockClient,
  updateClient,
} from '../lib/customer/administration.ts';
import {
  AddSecretSchema,
  AdministratorSchema,
  AuditQuerySchema,
  ClientParamsSchema,
  CreateClientSchema,
  NoQuerySchema,
  SecretParamsSchema,
  UpdateClientSchema,
} from '../lib/customer/requests.ts';
import { clientsView, clientView, eventView } from '../lib/customer/views.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { created, noContent, ok } from '../lib/http/responses.ts';
import { routes } from '../lib/http/router.ts';
import { customerApiDeps } from '../lib/wiring.ts';

const deps = await customerApiDeps(readCustomerApiConfig());
// Every route refuses a query parameter it does not take (audit-events takes two).
const common = { authorized: true, metrics: deps.metrics, query: NoQuerySchema } as const;
const now = () => deps.clock();
const clientUrl = (baseUrl: string, clientId: string) => `${baseUrl}/api/v1/customer/clients/${clientId}`;

/** /api/v1/customer/*: a customer's administrators manage its API clients (docs/administrators.md). */
export const handler = routes({
  customerListClients: endpoint({
    ...common,
    route: 'customerListClients',
    handle: async ({ caller, sourceIp }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      return ok({ clients: clientsView(await listClients(deps, admin), now()) });
    },
  }),
  customerCreateClient: endpoint({
    ...common,
    route: 'customerCreateClient',
    body: CreateClientSchema,
    needsBaseUrl: true,
    handle: async ({ caller, sourceIp, body, baseUrl }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      const made = await createClient(deps, admin, body);
      return created(
        { client: clientView(made.client, now()), secretId: made.secretId, clientSecret: made.clientSecret },
        clientUrl(baseUrl, made.client.clientId),
      );
    },
  }),
  customerGetClient: endpoint({
    ...common,
    route: 'customerGetClient',
    params: ClientParamsSchema,
    handle: async ({ caller, sourceIp, params }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      return ok(clientView(await getClient(deps, admin, params.clientId), now()));
    },
  }),
  customerUpdateClient: endpoint({
    ...common,
    route: 'customerUpdateClient',
    params: ClientParamsSchema,
    body: UpdateClientSchema,
    handle: async ({ caller, sourceIp, params, body }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      return ok(clientView(await updateClient(deps, admin, params.clientId, body), now()));
    },
  }),
  customerDeleteClient: endpoint({
    ...common,
    route: 'customerDeleteClient',
    params: ClientParamsSchema,
    handle: async ({ caller, sourceIp, params }) => {
      await removeClient(deps, await administratorOf(deps, caller, sourceIp), params.clientId);
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
    handle: async ({ caller, sourceIp, params, body, baseUrl }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      const made = await addSecret(deps, admin, params.clientId, body);
      return created(
        { client: clientView(made.client, now()), secretId: made.secretId, clientSecret: made.clientSecret },
        clientUrl(baseUrl, params.clientId),
      );
    },
  }),
  customerDeleteSecret: endpoint({
    ...common,
    route: 'customerDeleteSecret',
    params: SecretParamsSchema,
    handle: async ({ caller, sourceIp, params }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      await removeSecret(deps, admin, params.clientId, params.secretId);
      return noContent();
    },
  }),
  customerUnlockClient: endpoint({
    ...common,
    route: 'customerUnlockClient',
    params: ClientParamsSchema,
    handle: async ({ caller, sourceIp, params }) => {
      await unlockClient(deps, await administratorOf(deps, caller, sourceIp), params.clientId);
      return noContent();
    },
  }),
  customerAuditEvents: endpoint({
    ...common,
    route: 'customerAuditEvents',
    query: AuditQuerySchema,
    handle: async ({ caller, sourceIp, query }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      const page = await auditEvents(deps, admin, query);
      return ok({ events: page.events.map(eventView), next: page.next ?? null });
    },
  }),
  customerListAdministrators: endpoint({
    ...common,
    route: 'customerListAdministrators',
    handle: async ({ caller, sourceIp }) => {
      const admin = await administratorOf(deps, caller, sourceIp);
      const usernames = await listAdministrators(deps, admin);
      return ok({ administrators: usernames.map((username) => ({ username })) });
    },
  }),
  customerGrantAdministrator: endpoint({
    ...common,
    route: 'customerGrantAdministrator',
    body: AdministratorSchema,
    handle: async ({ caller, sourceIp, body }) => {
      await setAdministrator(deps, await administratorOf(deps, caller, sourceIp), body.username, true);
      return noContent();
    },
  }),
  customerRevokeAdministrator: endpoint({
    ...common,
    route: 'customerRevokeAdministrator',
    body: AdministratorSchema,
    handle: async ({ caller, sourceIp, body }) => {
      await setAdministrator(deps, await administratorOf(deps, caller, sourceIp), body.username, false);
      return noContent();
    },
  }),
});
