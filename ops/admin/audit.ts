/**
 * The operator's side of the audit trail (docs/admin.md, "Audit trail"): who the operator is,
 * the events the commands that change a credential write, and `audit list`.
 *
 * An event is written once its change is made. A trail that cannot be written then is a warning
 * on stderr, never the command's failure: the change stands, and a failure would send the
 * operator to run again a command whose second run makes another client or secret.
 */
import { userInfo } from 'node:os';
import * as v from 'valibot';
import {
  type AuditEvent,
  type AuditEventType,
  type NewAuditEvent,
  OPERATOR_ACTOR_PREFIX,
  pendingExpiries,
} from '../../lib/audit/audit.ts';
import { createAuditRecorder } from '../../lib/audit/recorder.ts';
import {
  type ClientRecord,
  type ClientRepository,
  type CustomerClient,
  isPlatform,
} from '../../lib/clients/clients.ts';
import type { Env } from '../../lib/config.ts';
import type { MetricsRecorder } from '../../lib/metrics/metrics.ts';
import type { CommandContext } from './context.ts';
import { describeFailure, failure, quote, usageError } from './errors.ts';
import type { Command } from './parse.ts';

/** A name an audit event can carry as it is: an account name, an e-mail address. */
const ActorSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._@+-]{1,128}$/, 'must be 1 to 128 letters, digits, ., _, @, + or -'),
);

/** The operating system's user, made a name ActorSchema accepts; its uid when it has no name. */
function osUserName(osUser: () => string): string {
  let name = '';
  try {
    name = osUser();
  } catch {
    // A container's user with no passwd entry has no name.
  }
  const recordable = name.replaceAll(/[^A-Za-z0-9._@+-]/g, '_').slice(0, 128);
  return recordable === '' ? `uid-${process.getuid?.() ?? 'unknown'}` : recordable;
}

/**
 * `operator:<name>`: AUDIT_ACTOR when set (a shared bastion's account, a pipeline), refused
 * (exit 2, before anything is done) when it is no name the trail can record; else the operating
 * system's user. What the operator's machine says, not an authenticated identity: on AWS,
 * CloudTrail names the principal that made each call.
 */
export function operatorActor(env: Env, osUser: () => string = () => userInfo().username): string {
  const given = env.AUDIT_ACTOR;
  if (given === undefined) return `${OPERATOR_ACTOR_PREFIX}${osUserName(osUser)}`;
  const checked = v.safeParse(ActorSchema, given);
  if (!checked.success) throw usageError(`environment variable AUDIT_ACTOR ${checked.issues[0].message}`);
  return `${OPERATOR_ACTOR_PREFIX}${checked.output}`;
}

/** What an event concerns, for a warning: `client pcl_… of customer C-1001`. */
function concerning(event: Pick<AuditEvent, 'customerId' | 'clientId' | 'secretId' | 'username'>) {
  const parts = [
    event.username === undefined ? undefined : `user ${quote(event.username)}`,
    event.secretId === undefined ? undefined : `secret ${event.secretId}`,
    event.clientId === undefined ? undefined : `client ${event.clientId}`,
  ].filter((part) => part !== undefined);
  return [...parts, `customer ${event.customerId}`].join(' of ');
}

/** The CLI has no metric stream: what the recorder counts, its warning says on stderr. */
const NO_METRIC_STREAM: MetricsRecorder = { count: () => {} };

/** The operator's recorder (lib/audit/recorder.ts): a failed write is a warning (see above). */
const operatorRecorder = (context: CommandContext) =>
  createAuditRecorder({
    trail: context.audit(),
    retentionSeconds: context.stageParams().auditRetentionSeconds,
    metrics: NO_METRIC_STREAM,
    clock: context.now,
    warn: ({ write, type, secretId, at, error, ...ids }) =>
      context.warn(
        (write === 'taken back'
          ? `the change is made, but the expiry event of secret ${secretId} (${at}) was not taken back: `
          : `the change is made, but its audit event (${type}, ${concerning({ ...ids, secretId })}) was not recorded: `) +
          describeFailure(error, context.target),
      ),
  });

/** Appends the operator's event for a change made; a failure is a warning (see above). */
export const recordOperatorEvent = (
  context: CommandContext,
  event: Omit<NewAuditEvent, 'actor' | 'source'>,
): Promise<void> => operatorRecorder(context).record({ ...event, actor: context.actor, source: 'operator' });

const clientEvent = (type: AuditEventType, client: Pick<CustomerClient, 'customerId' | 'clientId'>) => ({
  type,
  customerId: client.customerId,
  clientId: client.clientId,
});

/**
 * The client's event, its customer read from the store: for a change that leaves the client in
 * place (`client unlock`). Nothing is recorded for a client that is not there.
 */
export async function recordClientEvent(
  context: CommandContext,
  type: AuditEventType,
  clientId: string,
): Promise<void> {
  const client = await context.clients().findClient(clientId);
  // A customer's trail: a platform is of no customer (docs/platforms.md).
  if (client !== null && !isPlatform(client)) await recordOperatorEvent(context, clientEvent(type, client));
}

/**
 * The target's API clients, each change recorded in the audit trail once made. The client is
 * read before a change for the customer its event concerns: a removed client has none to read.
 */
export function auditedClients(context: CommandContext): ClientRepository {
  const clients = context.clients();
  const changed = async (
    clientId: string,
    type: AuditEventType,
    change: () => Promise<void>,
    secretId?: string,
    /** The secrets the change removes: their expiry events still to come are taken back. */
    removed?: (before: ClientRecord) => readonly string[],
    /** A platform's secret may change here (docs/platforms.md); its state only by `platform …`. */
    platformsToo = false,
  ) => {
    const before = await clients.findClient(clientId);
    if (before !== null && isPlatform(before) && !platformsToo)
      throw failure(`client ${clientId} is a platform: see platform --help`);
    await change();
    if (before === null || isPlatform(before)) return;
    await recordOperatorEvent(context, {
      ...clientEvent(type, before),
      ...(secretId !== undefined && { secretId }),
    });
    const gone = new Set(removed?.(before) ?? []);
    const pending = pendingExpiries(
      before,
      before.secrets.filter((secret) => gone.has(secret.id)),
      context.now(),
    );
    const recorder = operatorRecorder(context);
    for (const expiry of pending) {
      await recorder.guard({ type: 'client.secret.expired', ...expiry, write: 'taken back' }, () =>
        context.audit().unschedule(expiry),
      );
    }
  };
  return {
    ...clients,
    async createClient(client) {
      const created = await clients.createClient(client);
      await recordOperatorEvent(context, {
        ...clientEvent('client.created', client),
        ...(client.secret !== undefined && { secretId: client.secret.id }),
      });
      return created;
    },
    setClientEnabled: (clientId, enabled) =>
      changed(clientId, enabled ? 'client.enabled' : 'client.disabled', () =>
        clients.setClientEnabled(clientId, enabled),
      ),
    removeClient: (clientId) =>
      changed(
        clientId,
        'client.removed',
        () => clients.removeClient(clientId),
        undefined,
        (before) => before.secrets.map((secret) => secret.id),
      ),
    async addClientSecret(clientId, secret, options) {
      const change = await clients.addClientSecret(clientId, secret, options);
      if (!isPlatform(change.before))
        await recordOperatorEvent(context, {
          ...clientEvent('client.secret.added', change.before),
          secretId: secret.id,
        });
      return change;
    },
    removeClientSecret: (clientId, secretId) =>
      changed(
        clientId,
        'client.secret.removed',
        () => clients.removeClientSecret(clientId, secretId),
        secretId,
        () => [secretId],
        true,
      ),
  };
}

/** An event as `audit list` prints it: its fields in one order, without the TTL. */
const listed = ({ expiresAt: _expiresAt, ...event }: AuditEvent) => ({
  at: event.at,
  customerId: event.customerId,
  type: event.type,
  actor: event.actor,
  source: event.source,
  ...(event.sourceIp !== undefined && { sourceIp: event.sourceIp }),
  ...(event.clientId !== undefined && { clientId: event.clientId }),
  ...(event.secretId !== undefined && { secretId: event.secretId }),
  ...(event.username !== undefined && { username: event.username }),
  ...(event.reason !== undefined && { reason: event.reason }),
});

/** `audit list`: newest first, one JSON line per event. */
export async function listAuditEvents(
  command: Extract<Command, { name: 'audit list' }>,
  context: CommandContext,
): Promise<void> {
  // Up to now: an expiry a roll scheduled is shown once it has happened.
  const { events } = await context
    .audit()
    .list({ customerId: command.customerId, limit: command.limit, until: context.now() });
  for (const event of events) context.print(JSON.stringify(listed(event)));
}
