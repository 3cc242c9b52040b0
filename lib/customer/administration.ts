/**
 * A customer's administrators manage its API clients themselves (docs/administrators.md): the
 * rules of the self-service API, whatever answers it.
 *
 * - The caller is a user whose token holds `customer:admin` (the endpoint checks the scope) and
 *   whose user item still says so, read on every call: an administration an operator ended, a
 *   user disabled or moved to another customer, refuses at once, not at the token's expiry.
 * - The customer is the token's, never the request's: another customer's client answers 404, as
 *   an unknown one, so ids of other customers cannot even be confirmed. So does a client holding
 *   a scope the API never gives (`tokens:introspect`): an operator's, not the API's to touch.
 * - What yields or revives a credential (a new client or secret, a roll, enabling) holds the
 *   client's scopes within the administrator's own; so does granting administration for the
 *   grantee's scopes: a narrowed administrator widens nobody's reach, its own through another's.
 * - Creating a client or a secret shows a secret, enabling a client brings its secrets back, and
 *   granting administration hands out that power: each needs a login within RECENT_LOGIN_SECONDS
 *   (GitHub's sudo mode), so a stolen session's refreshes alone never mint credentials.
 * - A token revoked since API Gateway cached its decision is refused here, as the authorizer
 *   would refuse it now.
 * - Every change is recorded in the audit trail once made. A trail that cannot be written is a
 *   logged warning and a metric, not a failed answer: the change stands, and a failure would
 *   send the administrator to make another client or secret.
 */
import { randomUUID } from 'node:crypto';
import type { Administrations } from '../accounts/repository.ts';
import {
  type AuditEventType,
  type AuditPage,
  type AuditReader,
  type AuditScheduler,
  type AuditWriter,
  auditEvent,
  type NewAuditEvent,
  pendingExpiries,
  type ScheduledExpiry,
  userActor,
} from '../audit/audit.ts';
import {
  type ClientRecord,
  type ClientRepository,
  isLive,
  newClientId,
  newClientSecret,
} from '../clients/clients.ts';
import { AppError, RECENT_LOGIN_SECONDS } from '../errors.ts';
import { describeError, type Logger } from '../log.ts';
import type { MetricEvent, MetricsRecorder } from '../metrics/metrics.ts';
import { ADMIN_SCOPE, type Scope, SELF_SERVICE_CLIENT_SCOPES, userTokenScopes } from '../scopes.ts';
import { type LockRules, readNameLocks, unlockName } from '../throttle/locks.ts';
import { clientCounterKey, type ThrottleStore } from '../throttle/throttle.ts';
import type { Clock } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';

/** The longest a roll lets the other secrets live on: long enough for any deployment, short enough to end. */
export const MAX_EXPIRE_OTHERS_SECONDS = 30 * 86_400;

export interface AdministrationDeps {
  readonly administrations: Administrations;
  readonly clients: Pick<
    ClientRepository,
    | 'findClient'
    | 'listClients'
    | 'createClient'
    | 'setClientEnabled'
    | 'renameClient'
    | 'removeClient'
    | 'addClientSecret'
    | 'removeClientSecret'
  >;
  readonly audit: AuditWriter & AuditScheduler & AuditReader;
  readonly auditRetentionSeconds: number;
  readonly locks: {
    readonly store: ThrottleStore;
    readonly rules: LockRules;
    /** The secret the stage keys its failed-authentication counters with. */
    readonly counterSecret: () => Promise<Uint8Array>;
  };
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

/** An administrator as every call checks them. */
export interface Administrator {
  readonly username: string;
  readonly customerId: string;
  /** Epoch seconds of the password login the token's session began with; absent in older tokens. */
  readonly authTime: number | undefined;
  /** The token's scopes: a client it creates gets no route scope beyond them. */
  readonly scopes: readonly Scope[];
  /** The caller's address, for the audit trail. */
  readonly sourceIp: string;
}

const notAdministrator = () => new AppError('INSUFFICIENT_SCOPE', { requiredScope: ADMIN_SCOPE });

/**
 * The caller as an administrator of its token's customer, checked against the user item now.
 * INSUFFICIENT_SCOPE (naming `customer:admin`) for anyone else: a client, a user without a
 * customer, or one whose administration has ended since the token was issued.
 */
export async function administratorOf(
  deps: Pick<AdministrationDeps, 'administrations' | 'metrics' | 'logger'>,
  caller: Caller,
  sourceIp: string,
): Promise<Administrator> {
  const refuse = (reason: string) => {
    deps.logger.info('administration refused', { reason });
    deps.metrics.count({ name: 'AdministrationRefused', reason: 'NotAdministrator' });
    return notAdministrator();
  };
  if (caller.subject.kind !== 'user' || caller.customerId === null || !caller.scopes.includes(ADMIN_SCOPE))
    throw refuse('not an administrator’s token');
  const { username } = caller.subject;
  const stored = await deps.administrations.findAdministration(username);
  if (stored === null || !stored.enabled || !stored.admin || stored.customerId !== caller.customerId)
    throw refuse('administration ended');
  // The authorizer's decision may be cached from before a logout, a new password or `user logout`:
  // refused here as the authorizer would refuse the token now.
  const revoked =
    (caller.issuedAt ?? 0) < stored.revokedBefore ||
    (caller.sessionId !== undefined && stored.revokedSessions.has(caller.sessionId));
  if (revoked) {
    deps.logger.info('administration refused', { reason: 'token revoked' });
    throw new AppError('UNAUTHORIZED');
  }
  return {
    username,
    customerId: caller.customerId,
    authTime: caller.authTime,
    scopes: caller.scopes,
    sourceIp,
  };
}

/** RECENT_LOGIN_REQUIRED unless the token's session began with a password login RECENT_LOGIN_SECONDS ago or less. */
function requireRecentLogin(deps: Pick<AdministrationDeps, 'clock' | 'metrics'>, admin: Administrator) {
  const now = deps.clock().getTime() / 1000;
  if (admin.authTime === undefined || now - admin.authTime > RECENT_LOGIN_SECONDS) {
    deps.metrics.count({ name: 'AdministrationRefused', reason: 'RecentLoginRequired' });
    throw new AppError('RECENT_LOGIN_REQUIRED');
  }
}

/** The details of the API's own refusals (docs/openapi.yaml shows them). */
export const REFUSALS = {
  noSuchClient: 'No such client.',
  noSuchSecret: 'No such live secret.',
  noSuchUser: 'No such user.',
  thirdSecret: 'The client has 2 live secrets: remove one first, or wait until one expires.',
  lastSecret: 'This is the client’s last live secret: add another first, or disable or remove the client.',
  lastLastingSecret:
    'This is the client’s last secret that does not expire: the others stop by themselves. Add another first.',
  lastAdministrator: 'This is the customer’s last administrator: grant administration to another user first.',
  endInProgress: 'Another change of this administration is in progress: try again in a moment.',
} as const;

const noSuchClient = () => new AppError('NOT_FOUND', { detail: REFUSALS.noSuchClient });

/** Whether the self-service API may touch the client: it holds only scopes the API gives. */
const isSelfService = (client: Pick<ClientRecord, 'scopes'>) =>
  client.scopes.every((scope) => SELF_SERVICE_CLIENT_SCOPES.includes(scope));

/**
 * The client if it is the administrator's customer's and the API's to touch; NOT_FOUND
 * otherwise, as for an unknown id.
 */
async function ownClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  const client = await deps.clients.findClient(clientId);
  if (client === null || client.customerId !== admin.customerId || !isSelfService(client))
    throw noSuchClient();
  return client;
}

/**
 * INSUFFICIENT_SCOPE naming the first of `scopes` the administrator's token lacks: an
 * administrator an operator narrowed yields no credential, and makes no administrator, beyond it.
 */
function requireWithinOwn(
  deps: Pick<AdministrationDeps, 'metrics'>,
  admin: Administrator,
  scopes: readonly Scope[],
) {
  const beyond = scopes.find((scope) => !admin.scopes.includes(scope));
  if (beyond === undefined) return;
  deps.metrics.count({ name: 'AdministrationRefused', reason: 'BeyondOwnScopes' });
  throw new AppError('INSUFFICIENT_SCOPE', { requiredScope: beyond });
}

/**
 * The store's refusals in the API's words: a client gone since it was read is not found, as an
 * unknown id; a rule of the secrets (CONFLICT) is said as `conflict` says it.
 */
async function onClient<T>(call: () => Promise<T>, conflict?: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === 'NOT_FOUND' && error.detail === 'no such client') throw noSuchClient();
    if (error.code === 'NOT_FOUND') throw new AppError('NOT_FOUND', { detail: REFUSALS.noSuchSecret });
    if (error.code === 'CONFLICT' && conflict !== undefined)
      throw new AppError('CONFLICT', { detail: conflict });
    throw error;
  }
}

type EventDetails = Omit<NewAuditEvent, 'customerId' | 'type' | 'actor' | 'source' | 'sourceIp'>;

/** The changes an administrator makes, each an audit event type and a metric's value. */
type AdministratorChange = Extract<MetricEvent, { name: 'CredentialChanged' }>['type'];

async function record(
  deps: AdministrationDeps,
  admin: Administrator,
  type: AdministratorChange,
  details: EventDetails,
) {
  deps.metrics.count({ name: 'CredentialChanged', type });
  const event = auditEvent(
    {
      customerId: admin.customerId,
      type,
      actor: userActor(admin.username),
      source: 'api',
      ...(admin.sourceIp !== '' && { sourceIp: admin.sourceIp }),
      ...details,
    },
    deps.clock(),
    deps.auditRetentionSeconds,
  );
  await unfailing(deps, type, details.clientId, () => deps.audit.append(event));
}

/** A trail write that fails is a warning and a metric: the change it records is made. */
async function unfailing(
  deps: AdministrationDeps,
  type: AuditEventType,
  clientId: string | undefined,
  write: () => Promise<void>,
  warning = 'audit event not recorded',
) {
  try {
    await write();
  } catch (error) {
    deps.metrics.count({ name: 'AuditWriteFailed' });
    deps.logger.warn(warning, { type, clientId, error: describeError(error) });
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
  client: Pick<ClientRecord, 'clientId' | 'customerId'>,
  before: ClientRecord['secrets'],
  after: ClientRecord['secrets'],
) {
  const now = deps.clock();
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
      await unfailing(
        deps,
        'client.secret.expired',
        client.clientId,
        () => deps.audit.unschedule(pending),
        'scheduled audit event not taken back',
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
      await unfailing(deps, 'client.secret.expired', client.clientId, () => deps.audit.schedule(event));
    }
  }
}

export const listClients = async (deps: AdministrationDeps, admin: Administrator) =>
  (await deps.clients.listClients(admin.customerId)).filter(isSelfService);

export const getClient = (deps: AdministrationDeps, admin: Administrator, clientId: string) =>
  ownClient(deps, admin, clientId);

/** What a new secret's answer carries: the secret itself, shown this once. */
export interface CreatedSecret {
  readonly client: ClientRecord;
  readonly secretId: string;
  readonly clientSecret: string;
}

/** Reads back what was just written; a client gone in between answers as removed. */
async function readBack(deps: AdministrationDeps, clientId: string) {
  const client = await deps.clients.findClient(clientId);
  if (client === null) throw noSuchClient();
  return client;
}

export async function createClient(
  deps: AdministrationDeps,
  admin: Administrator,
  request: { readonly name: string; readonly scopes: readonly Scope[] },
): Promise<CreatedSecret> {
  requireRecentLogin(deps, admin);
  requireWithinOwn(deps, admin, request.scopes);
  const clientId = newClientId();
  const { secret, stored } = newClientSecret(deps.clock());
  // Answered from what was written: a read after it could fail once the client exists.
  const client = await deps.clients.createClient({
    clientId,
    customerId: admin.customerId,
    name: request.name,
    scopes: request.scopes,
    secret: stored,
  });
  await record(deps, admin, 'client.created', { clientId, secretId: stored.id, name: request.name });
  return { client, secretId: stored.id, clientSecret: secret };
}

export async function addSecret(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  request: { readonly expireOthersInSeconds?: number | undefined },
): Promise<CreatedSecret> {
  requireRecentLogin(deps, admin);
  requireWithinOwn(deps, admin, (await ownClient(deps, admin, clientId)).scopes);
  const now = deps.clock();
  const { secret, stored } = newClientSecret(now);
  const seconds = request.expireOthersInSeconds;
  const expireOthersAt = seconds === undefined ? undefined : new Date(now.getTime() + seconds * 1000);
  const { before, after } = await onClient(
    () =>
      deps.clients.addClientSecret(clientId, stored, expireOthersAt === undefined ? {} : { expireOthersAt }),
    REFUSALS.thirdSecret,
  );
  await rescheduleExpiries(deps, admin, after, before.secrets, after.secrets);
  await record(deps, admin, expireOthersAt === undefined ? 'client.secret.added' : 'client.secret.rolled', {
    clientId,
    secretId: stored.id,
    ...(expireOthersAt !== undefined && { secretExpiresAt: expireOthersAt.toISOString() }),
  });
  return { client: after, secretId: stored.id, clientSecret: secret };
}

export async function removeSecret(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  secretId: string,
): Promise<void> {
  const client = await ownClient(deps, admin, clientId);
  // The last secret that does not expire stays: removing it would leave the client to stop by itself.
  const now = deps.clock();
  const staying = client.secrets.filter((secret) => secret.id !== secretId && isLive(secret, now));
  const removing = client.secrets.some((secret) => secret.id === secretId && isLive(secret, now));
  if (removing && staying.length > 0 && staying.every((secret) => secret.expiresAt !== undefined))
    throw new AppError('CONFLICT', { detail: REFUSALS.lastLastingSecret });
  await onClient(() => deps.clients.removeClientSecret(clientId, secretId), REFUSALS.lastSecret);
  await rescheduleExpiries(
    deps,
    admin,
    client,
    client.secrets.filter((secret) => secret.id === secretId),
    [],
  );
  await record(deps, admin, 'client.secret.removed', { clientId, secretId });
}

export async function updateClient(
  deps: AdministrationDeps,
  admin: Administrator,
  clientId: string,
  change: { readonly enabled?: boolean | undefined; readonly name?: string | undefined },
): Promise<ClientRecord> {
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
    await record(deps, admin, 'client.renamed', { clientId, name });
  }
  if (enabling && change.enabled !== undefined) {
    const enabled = change.enabled;
    await onClient(() => deps.clients.setClientEnabled(clientId, enabled));
    await record(deps, admin, enabled ? 'client.enabled' : 'client.disabled', { clientId });
  }
  return readBack(deps, clientId);
}

export async function removeClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  const client = await ownClient(deps, admin, clientId);
  await onClient(() => deps.clients.removeClient(clientId));
  await rescheduleExpiries(deps, admin, client, client.secrets, []);
  await record(deps, admin, 'client.removed', { clientId });
}

/** Ends the client id's locks, as the operator's `client unlock`: its known sources stay known. */
export async function unlockClient(deps: AdministrationDeps, admin: Administrator, clientId: string) {
  await ownClient(deps, admin, clientId);
  const key = clientCounterKey(clientId, await deps.locks.counterSecret());
  const locks = await readNameLocks(deps.locks.store, key, deps.locks.rules, deps.clock());
  await unlockName(deps.locks.store, key, locks);
  await record(deps, admin, 'client.unlocked', { clientId });
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

export const listAdministrators = (deps: AdministrationDeps, admin: Administrator) =>
  deps.administrations.listAdministrators(admin.customerId);

/**
 * The longest an end of an administration holds its mark: longer than any call runs (API
 * Gateway ends an integration within 29 s), so a mark that a failed call left behind ends too.
 */
export const ENDING_HOLD_MS = 30_000;

/**
 * Whether a user of the customer other than `username` administers it and may act: enabled,
 * and not being ended itself. The index names the candidates; each is read again, strongly
 * consistent, because the index may still list an administration ended a moment ago. A grant
 * of a moment ago may be missing from it, which only refuses.
 */
async function anotherAdministrator(deps: AdministrationDeps, customerId: string, username: string) {
  const candidates = await deps.administrations.listAdministrators(customerId);
  const now = deps.clock().getTime();
  for (const name of candidates.filter((candidate) => candidate !== username)) {
    const other = await deps.administrations.findAdministration(name);
    if (other?.admin === true && other.enabled && other.customerId === customerId && other.endingUntil <= now)
      return true;
  }
  return false;
}

const noSuchUser = () => new AppError('NOT_FOUND', { detail: REFUSALS.noSuchUser });

/**
 * Grants (true) or ends (false) the administration of a user of the administrator's own customer,
 * as an operator's `user admin grant|revoke`. It gives the power to mint credentials, so it
 * needs the recent login too, and a narrowed administrator grants it only to a user whose
 * scopes are within its own. Ending one's own is allowed; ending it revokes that user's tokens.
 * The last administration of a customer is not ended here (GitHub's last owner): the customer
 * would have nobody to manage its credentials until an operator granted one again, as the
 * operator's `user admin revoke` still may.
 */
export async function setAdministrator(
  deps: AdministrationDeps,
  admin: Administrator,
  username: string,
  administers: boolean,
): Promise<void> {
  requireRecentLogin(deps, admin);
  const user = await deps.administrations.findAdministration(username);
  if (user === null || user.customerId !== admin.customerId) throw noSuchUser();
  // Already so: nothing changes, so no user is signed out and nothing is recorded.
  if (user.admin === administers) return;
  if (administers) {
    requireWithinOwn(deps, admin, userTokenScopes({ scopes: user.scopes }));
    // Conditioned on the customer in its write: a user removed and added again under another
    // customer since the read above is not made an administrator of it.
    await deps.administrations.setAdministrator(username, true, admin.customerId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'NOT_FOUND') throw noSuchUser();
      throw error;
    });
  } else if (!(await endAdministration(deps, admin.customerId, username))) {
    return;
  }
  await record(deps, admin, administers ? 'user.admin.granted' : 'user.admin.revoked', { username });
}

/**
 * Ends `username`'s administration unless it is the customer's last. Two ends at once each
 * mark their user first and then look for another administrator not marked, so that of two
 * administrators ending each other (or themselves) at least one sees the other's mark and is
 * refused: no interleaving leaves the customer without one (each end's look comes after its own
 * mark, so the later look of the two sees the earlier mark).
 */
async function endAdministration(
  deps: AdministrationDeps,
  customerId: string,
  username: string,
): Promise<boolean> {
  const now = deps.clock().getTime();
  const ending = { id: randomUUID(), until: now + ENDING_HOLD_MS };
  const marked = await deps.administrations.markEnding(username, customerId, ending, now);
  // Ended (or moved) since the read: nothing left to end, and nothing to record.
  if (marked === 'not-administrator') return false;
  if (marked === 'in-progress') throw new AppError('CONFLICT', { detail: REFUSALS.endInProgress });
  try {
    if (!(await anotherAdministrator(deps, customerId, username)))
      throw new AppError('CONFLICT', { detail: REFUSALS.lastAdministrator });
    // On condition that the mark still holds: an end slower than its mark is refused, as an
    // end whose look could be stale by then. A write the SDK sent again after its answer was
    // lost finds its own mark gone with the administration: ended all the same.
    if (await deps.administrations.endMarked(username, customerId, ending, deps.clock().getTime()))
      return true;
    if ((await deps.administrations.findAdministration(username))?.admin === false) return true;
    throw new AppError('CONFLICT', { detail: REFUSALS.endInProgress });
  } catch (error) {
    // A mark left behind holds for ENDING_HOLD_MS at most: the refusal stands either way.
    await deps.administrations.unmark(username, ending).catch((failure: unknown) => {
      deps.logger.warn('administration end not taken back', { error: describeError(failure) });
    });
    throw error;
  }
}
