/**
 * A customer's API clients as its administrators manage them (docs/administrators.md). The
 * customer is the administrator's: another customer's client answers 404, as an unknown one, so
 * ids of other customers cannot even be confirmed; so does a client holding a scope the API never
 * gives (`tokens:introspect`): an operator's, not the API's to touch. The rules of the secrets
 * are lib/clients/secrets.ts's; refusals come back from the store as reasons, said here in the
 * API's words (REFUSED).
 */
import {
  type AuditPage,
  auditEvent,
  pendingExpiries,
  type ScheduledExpiry,
  userActor,
} from '../audit/audit.ts';
import { type ClientRecord, type CustomerClient, isPlatform, newClientId } from '../clients/clients.ts';
import { type ClientJwks, keyCredentials } from '../clients/jwks.ts';
import type { ClientJwk } from '../clients/keys.ts';
import { type ClientSecret, newClientSecret } from '../clients/secrets.ts';
import { AppError } from '../errors.ts';
import { type Scope, SELF_SERVICE_CLIENT_SCOPES } from '../scopes.ts';
import { clientCounterKey } from '../throttle/counters.ts';
import { readNameLocks, unlockName } from '../throttle/locks.ts';
import { type AdministrationDeps, REFUSALS, REFUSED } from './administration.ts';
import { type Administrator, recordChange, requireRecentLogin, requireWithinOwn } from './administrator.ts';

const noSuchClient = () => new AppError('NOT_FOUND', { detail: REFUSALS.noSuchClient });

/** Whether the self-service API may touch the client: it holds only scopes the API gives. */
const isSelfService = (client: Pick<CustomerClient, 'scopes'>) =>
  client.scopes.every((scope) => SELF_SERVICE_CLIENT_SCOPES.includes(scope));

/**
 * The client if it is the administrator's customer's and the API's to touch; NOT_FOUND
 * otherwise, as for an unknown id.
 */
async function ownClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  const client = await deps.clients.findClient(clientId);
  if (
    client === null ||
    isPlatform(client) ||
    client.customerId !== admin.customerId ||
    !isSelfService(client)
  )
    throw noSuchClient();
  return client;
}

/**
 * The store's refusals in the API's words, by their reason: a client gone since it was read is
 * not found, as an unknown id; a rule of the secrets as REFUSED says it.
 */
async function onClient<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const said = error instanceof AppError && error.reason !== undefined ? REFUSED[error.reason] : undefined;
    if (said === undefined || !(error instanceof AppError)) throw error;
    throw new AppError(error.code, { detail: said });
  }
}

/**
 * The expiry events of a change of secrets: each secret whose end moved gets its new one
 * scheduled and its old one taken back, so the trail says when each secret stopped, and only
 * that. The caller passes the secrets before and after (an absent one: removed).
 */
async function rescheduleExpiries(
  deps: AdministrationDeps,
  admin: Administrator,
  client: Pick<CustomerClient, 'clientId' | 'customerId'>,
  before: CustomerClient['secrets'],
  after: CustomerClient['secrets'],
) {
  const now = deps.clock();
  const expired = {
    type: 'client.secret.expired',
    customerId: client.customerId,
    clientId: client.clientId,
  } as const;
  const expiry = (secretId: string, at: string): ScheduledExpiry => ({
    customerId: client.customerId,
    clientId: client.clientId,
    secretId,
    at,
  });
  for (const old of before) {
    const current = after.find((secret) => secret.id === old.id);
    if (current?.expiresAt === old.expiresAt) continue;
    // An end already passed is history: the event stays.
    for (const pending of pendingExpiries(client, [old], now)) {
      await deps.recorder.guard({ ...expired, secretId: pending.secretId, write: 'taken back' }, () =>
        deps.audit.unschedule(pending),
      );
    }
    if (current?.expiresAt !== undefined) {
      const at = current.expiresAt;
      const event = {
        ...auditEvent(
          {
            customerId: client.customerId,
            type: 'client.secret.expired',
            actor: userActor(admin.username),
            source: 'api',
            ...(admin.sourceIp !== '' && { sourceIp: admin.sourceIp }),
            clientId: client.clientId,
            secretId: current.id,
            secretExpiresAt: at,
          },
          new Date(at),
          deps.auditRetentionSeconds,
        ),
        ...expiry(current.id, at),
      };
      await deps.recorder.guard({ ...expired, secretId: current.id, write: 'scheduled' }, () =>
        deps.audit.schedule(event),
      );
    }
  }
}

export const listClients = async (deps: AdministrationDeps, admin: Administrator) =>
  (await deps.clients.listClients(admin.customerId)).filter(isSelfService);

export const getClient = (deps: AdministrationDeps, admin: Administrator, clientId: string) =>
  ownClient(deps, admin, clientId);

/** What a new secret's answer carries: the secret itself, shown this once. */
export interface CreatedSecret {
  readonly client: CustomerClient;
  readonly secretId: string;
  readonly clientSecret: string;
}

/** Reads back what was just written; a client gone in between answers as removed. */
async function readBack(deps: AdministrationDeps, clientId: string) {
  return customerClient(await deps.clients.findClient(clientId));
}

/** A client the store answered, checked by ownClient before: a platform here is gone and another came. */
const customerClient = (client: ClientRecord | null): CustomerClient => {
  if (client === null || isPlatform(client)) throw noSuchClient();
  return client;
};

/**
 * A new client: of a secret, shown this once, or, with `jwks`, of those public keys
 * (`private_key_jwt`, docs/clients.md) and no secret at all.
 */
export async function createClient(
  deps: AdministrationDeps,
  admin: Administrator,
  request: {
    readonly name: string;
    readonly scopes: readonly Scope[];
    readonly jwks?: ClientJwks | undefined;
    readonly dpopBoundAccessTokens?: boolean | undefined;
  },
): Promise<CreatedSecret | { readonly client: CustomerClient }> {
  requireRecentLogin(deps, admin);
  requireWithinOwn(deps, admin, request.scopes);
  const clientId = newClientId();
  const dpop = request.dpopBoundAccessTokens === true && { dpopBoundAccessTokens: true };
  if (request.jwks !== undefined) {
    const keys = await keyCredentials(request.jwks, deps.clock());
    const client = await deps.clients.createClient({
      clientId,
      customerId: admin.customerId,
      name: request.name,
      scopes: request.scopes,
      ...dpop,
      keys,
    });
    await recordChange(deps, admin, 'client.created', { clientId, name: request.name });
    return { client };
  }
  const { secret, stored } = newClientSecret(deps.clock());
  // Answered from what was written: a read after it could fail once the client exists.
  const client = await deps.clients.createClient({
    clientId,
    customerId: admin.customerId,
    name: request.name,
    scopes: request.scopes,
    ...dpop,
    secret: stored,
  });
  await recordChange(deps, admin, 'client.created', { clientId, secretId: stored.id, name: request.name });
  return { client, secretId: stored.id, clientSecret: secret };
}

export async function addSecret(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  request: { readonly expireOthersInSeconds?: number | undefined; readonly jwk?: ClientJwk | undefined },
): Promise<CreatedSecret | { readonly client: CustomerClient; readonly secretId: string }> {
  requireRecentLogin(deps, admin);
  requireWithinOwn(deps, admin, (await ownClient(deps, admin, clientId)).scopes);
  const now = deps.clock();
  // A key for a client of keys (its rotation), or a secret, shown this once.
  const { secret, stored } =
    request.jwk === undefined
      ? newClientSecret(now)
      : {
          secret: undefined,
          stored: (await keyCredentials({ keys: [request.jwk] }, now))[0] as ClientSecret,
        };
  const seconds = request.expireOthersInSeconds;
  const expireOthersAt = seconds === undefined ? undefined : new Date(now.getTime() + seconds * 1000);
  const change = await onClient(() =>
    deps.clients.addClientSecret(clientId, stored, expireOthersAt === undefined ? {} : { expireOthersAt }),
  );
  const [before, after] = [change.before, customerClient(change.after)];
  await rescheduleExpiries(deps, admin, after, before.secrets, after.secrets);
  await recordChange(
    deps,
    admin,
    expireOthersAt === undefined ? 'client.secret.added' : 'client.secret.rolled',
    {
      clientId,
      secretId: stored.id,
      ...(expireOthersAt !== undefined && { secretExpiresAt: expireOthersAt.toISOString() }),
    },
  );
  return secret === undefined
    ? { client: after, secretId: stored.id }
    : { client: after, secretId: stored.id, clientSecret: secret };
}

export async function removeSecret(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  secretId: string,
): Promise<void> {
  const client = await ownClient(deps, admin, clientId);
  // The last secret that does not expire stays too: removing it would leave the client to stop by itself.
  await onClient(() => deps.clients.removeClientSecret(clientId, secretId, { keepLasting: true }));
  await rescheduleExpiries(
    deps,
    admin,
    client,
    client.secrets.filter((secret) => secret.id === secretId),
    [],
  );
  await recordChange(deps, admin, 'client.secret.removed', { clientId, secretId });
}

export async function updateClient(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  change: { readonly enabled?: boolean | undefined; readonly name?: string | undefined },
): Promise<CustomerClient> {
  const client = await ownClient(deps, admin, clientId);
  const renaming = change.name !== undefined && change.name !== client.name;
  const enabling = change.enabled !== undefined && change.enabled !== client.enabled;
  // Enabling brings back every secret the client holds, a leaked one too: as showing a secret.
  // Every refusal comes before the first write, so a refused change changes nothing.
  if (enabling && change.enabled === true) {
    requireRecentLogin(deps, admin);
    requireWithinOwn(deps, admin, client.scopes);
  }
  if (renaming && change.name !== undefined) {
    const name = change.name;
    await onClient(() => deps.clients.renameClient(clientId, name));
    await recordChange(deps, admin, 'client.renamed', { clientId, name });
  }
  if (enabling && change.enabled !== undefined) {
    const enabled = change.enabled;
    await onClient(() => deps.clients.setClientEnabled(clientId, enabled));
    await recordChange(deps, admin, enabled ? 'client.enabled' : 'client.disabled', { clientId });
  }
  return readBack(deps, clientId);
}

export async function removeClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  const client = await ownClient(deps, admin, clientId);
  await onClient(() => deps.clients.removeClient(clientId));
  await rescheduleExpiries(deps, admin, client, client.secrets, []);
  await recordChange(deps, admin, 'client.removed', { clientId });
}

/** Ends the client id's locks, as the operator's `client unlock`: its known sources stay known. */
export async function unlockClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  await ownClient(deps, admin, clientId);
  const key = clientCounterKey(clientId, await deps.locks.counterSecret());
  const locks = await readNameLocks(deps.locks.store, key, deps.locks.rules, deps.clock());
  await unlockName(deps.locks.store, key, locks);
  await recordChange(deps, admin, 'client.unlocked', { clientId });
}

/** The customer's events, newest first, up to now: a roll's scheduled expiry shows once it happened. */
export const auditEvents = (
  deps: AdministrationDeps,
  admin: Administrator,
  page: { readonly limit: number; readonly next?: string | undefined },
): Promise<AuditPage> =>
  deps.audit.list({
    customerId: admin.customerId,
    limit: page.limit,
    until: deps.clock(),
    ...(page.next !== undefined && { after: page.next }),
  });
