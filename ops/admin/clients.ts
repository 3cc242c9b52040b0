/**
 * The `client` commands: API clients (OAuth 2.0 client credentials) of a customer, their
 * secrets, and listing them. A secret is generated here and printed once, on stdout, after
 * the store holds its digest; it is never an argument, never on stderr, and never stored.
 */

import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import {
  type ClientRecord,
  type CustomerClient,
  isPlatform,
  type NewCredentials,
  newClientId,
} from '../../lib/clients/clients.ts';
import { type ClientJwks, ClientJwksSchema, keyCredentials } from '../../lib/clients/jwks.ts';
import {
  type ClientSecret,
  liveSecrets,
  MAX_LIVE_SECRETS,
  newClientSecret,
} from '../../lib/clients/secrets.ts';
import { isAppError, type Refusal } from '../../lib/errors.ts';
import { clientCounterKey } from '../../lib/throttle/counters.ts';
import { readNameLocks, unlockName } from '../../lib/throttle/locks.ts';
import { auditedClients, recordClientEvent } from './audit.ts';
import type { CommandContext } from './context.ts';
import { failure } from './errors.ts';
import { failedLogins, unlockedLines } from './locks.ts';
import type { Command } from './parse.ts';
import { printRows } from './rows.ts';

type ClientCommand = Extract<Command, { name: `client ${string}` }>;

/** How soon tokens stop, said wherever a command stops them. */
export const WITHIN_BOUND =
  'within the stage’s revocation bound (revocationCacheTtl + authorizerCacheTtl, docs/tokens-and-sessions.md)';

/** The store's refusals (lib/errors.ts Refusal) in the operator's words. */
const REFUSED: Partial<Record<Refusal, string>> = {
  'no-such-client': 'no such client',
  'no-such-secret': 'the client has no live secret with this id',
  'secrets-full': `the client has ${MAX_LIVE_SECRETS} live secrets: remove one (client secret remove) first`,
  'other-credential-kind': 'the client authenticates with keys (private_key_jwt): it takes no secret',
  'last-live-secret':
    'this is the client’s last live secret: add its successor first, or disable or remove the client',
  'client-exists': 'a client with this id exists',
  'secret-exists': 'the client has a secret with this id, or a live key with this kid',
};

/**
 * The store's refusals as one line and exit 1: NOT_FOUND as `notFound` says when given, every
 * refusal by its reason, VALIDATION_FAILED with its detail; anything else as it is.
 */
async function onClient<T>(what: string, call: () => Promise<T>, notFound?: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isAppError(error)) throw error;
    if (error.code === 'NOT_FOUND' && notFound !== undefined) throw failure(notFound);
    const refused = error.reason === undefined ? undefined : REFUSED[error.reason];
    if (refused !== undefined) throw failure(`${what}: ${refused}`);
    if (error.code === 'VALIDATION_FAILED') throw failure(`${what}: ${error.detail ?? error.code}`);
    throw error;
  }
}

const notFound = (clientId: string) => `client ${clientId} not found`;

/** The secret, once, with what the operator must know about it; `to`: who gets it (a platform's too). */
export function printSecret(
  context: CommandContext,
  clientId: string,
  secretId: string,
  secret: string,
  to = 'the integrator',
) {
  context.print(`client id:  ${clientId}`);
  context.print(`secret id:  ${secretId}`);
  context.print(`secret:     ${secret}`);
  context.print(
    `The secret is shown only this once: only its digest is stored. Hand it to ${to} over a secure channel now.`,
  );
}

/** A JWK Set file of public keys (`--jwks`), checked as the self-service API checks its `jwks`. */
export async function readJwks(file: string): Promise<ClientJwks> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw failure(`cannot read the JWK Set ${file}`);
  }
  let parsed: v.SafeParseResult<typeof ClientJwksSchema>;
  try {
    parsed = v.safeParse(ClientJwksSchema, JSON.parse(text));
  } catch {
    throw failure(`${file} is not JSON`);
  }
  if (!parsed.success) {
    const [issue] = parsed.issues;
    const path = issue?.path?.map((step) => String(step.key)).join('.') ?? '';
    throw failure(
      `${file} is not a JWK Set of public keys we take: ${path === '' ? '' : `${path} `}${issue?.message ?? ''}`,
    );
  }
  return parsed.output;
}

/** A client of keys as registered: its id, and each key's slot id and kid (no secret: there is none). */
export function printKeys(context: CommandContext, clientId: string, keys: readonly ClientSecret[]) {
  context.print(`client id:  ${clientId}`);
  for (const slot of keys) context.print(`key id:     ${slot.id} (kid ${slot.key?.kid ?? ''})`);
  context.print('It authenticates with private_key_jwt, signed by one of these keys; it has no secret.');
}

/** A client's or platform's live secrets as the listings print them at `now`: never a digest. */
export const listedSecrets = (secrets: ClientRecord['secrets'], now: Date) =>
  liveSecrets(secrets, now).map(({ id, key, createdAt, expiresAt, lastUsedAt }) => ({
    id,
    // A key's (private_key_jwt): the kid its assertions name.
    ...(key !== undefined && { kid: key.kid }),
    createdAt,
    expiresAt: expiresAt ?? null,
    lastUsedAt: lastUsedAt ?? null,
  }));

/**
 * A client as `client list` and `client show` show it at `now`: its live secrets, never a
 * digest. `lastUsedAt` is the last token grant, to within an hour (docs/clients.md, "Last
 * use"); null: none recorded yet. A secret's `expiresAt` null: it works until removed.
 */
const listed = (client: CustomerClient, now: Date) => ({
  clientId: client.clientId,
  customerId: client.customerId,
  name: client.name ?? null,
  scopes: [...client.scopes],
  enabled: client.enabled,
  secrets: listedSecrets(client.secrets, now),
  dpopBoundAccessTokens: client.dpopBoundAccessTokens === true,
  createdAt: client.createdAt,
  lastUsedAt: client.lastUsedAt ?? null,
});

type ListedSecret = ReturnType<typeof listed>['secrets'][number];

const cellText = (column: string, value: unknown) => {
  if (column === 'scopes') return (value as string[]).join(' ');
  if (column === 'secrets')
    return (value as ListedSecret[])
      .map(
        ({ id, kid, createdAt, expiresAt, lastUsedAt }) =>
          `${id}${kid === undefined ? '' : ` key ${kid}`} (${createdAt}, used ${lastUsedAt ?? 'never'}${expiresAt === null ? '' : `, expires ${expiresAt}`})`,
      )
      .join(', ');
  if (column === 'enabled') return value === true ? 'enabled' : 'disabled';
  if (column === 'lastUsedAt') return value === null ? 'never' : String(value);
  if (column === 'name') return value === null ? '-' : JSON.stringify(value);
  return String(value);
};

/** `counterSecret`: the secret the stage keys its failed-login counters with (client show's and unlock's). */
export async function runClientCommand(
  command: ClientCommand,
  context: CommandContext,
  counterSecret: () => Promise<Uint8Array>,
): Promise<void> {
  const clients = auditedClients(context);
  switch (command.name) {
    case 'client add': {
      const clientId = newClientId();
      const { customerId, scopes, clientName } = command;
      const created = (credentials: NewCredentials) =>
        onClient(`cannot create a client for customer ${customerId}`, () =>
          clients.createClient({
            clientId,
            customerId,
            ...(clientName !== undefined && { name: clientName }),
            scopes,
            ...(command.dpop && { dpopBoundAccessTokens: true }),
            ...credentials,
          }),
        );
      const dpop = command.dpop ? ', DPoP-bound tokens only' : '';
      if (command.jwksFile !== undefined) {
        const keys = await keyCredentials(await readJwks(command.jwksFile), context.now());
        await created({ keys });
        context.print(
          `created client ${clientId} for customer ${customerId}, scopes ${scopes.join(' ')}${dpop}`,
        );
        printKeys(context, clientId, keys);
        return;
      }
      const { secret, stored } = newClientSecret(context.now());
      await created({ secret: stored });
      context.print(
        `created client ${clientId} for customer ${customerId}, scopes ${scopes.join(' ')}${dpop}`,
      );
      printSecret(context, clientId, stored.id, secret);
      return;
    }
    case 'client list': {
      const found = await clients.listClients(command.customerId);
      printRows(
        context,
        found.map((client) => listed(client, context.now())),
        ['clientId', 'customerId', 'name', 'scopes', 'enabled', 'secrets', 'createdAt', 'lastUsedAt'],
        cellText,
      );
      return;
    }
    case 'client disable':
      await onClient(
        `cannot disable client ${command.clientId}`,
        () => clients.setClientEnabled(command.clientId, false),
        notFound(command.clientId),
      );
      context.print(`disabled client ${command.clientId}; its access tokens stop ${WITHIN_BOUND}`);
      return;
    case 'client enable':
      await onClient(
        `cannot enable client ${command.clientId}`,
        () => clients.setClientEnabled(command.clientId, true),
        notFound(command.clientId),
      );
      context.print(
        `enabled client ${command.clientId}; the tokens its disabling revoked stay revoked (it asks for new ones)`,
      );
      return;
    case 'client remove':
      await onClient(
        `cannot remove client ${command.clientId}`,
        () => clients.removeClient(command.clientId),
        notFound(command.clientId),
      );
      context.print(`removed client ${command.clientId}; its access tokens stop ${WITHIN_BOUND}`);
      return;
    case 'client show': {
      // The counters only of a client that exists: for any other id it is "not found", as ever.
      const found = await clients.findClient(command.clientId);
      if (found === null) throw failure(notFound(command.clientId));
      if (isPlatform(found)) throw failure(`client ${command.clientId} is a platform: see platform show`);
      const key = clientCounterKey(found.clientId, await counterSecret());
      const locks = await readNameLocks(context.loginFailures(), key, context.stageParams(), context.now());
      context.print(
        JSON.stringify(
          { ...listed(found, context.now()), failedAuthentications: failedLogins(locks) },
          null,
          2,
        ),
      );
      return;
    }
    case 'client unlock': {
      // The client id's counter and its known sources': a source address's counter stays, and only decays.
      if ((await clients.findClient(command.clientId)) === null) throw failure(notFound(command.clientId));
      const key = clientCounterKey(command.clientId, await counterSecret());
      const store = context.loginFailures();
      const locks = await readNameLocks(store, key, context.stageParams(), context.now());
      await unlockName(store, key, locks);
      await recordClientEvent(context, 'client.unlocked', command.clientId);
      for (const line of unlockedLines(`the failed authentications of client ${command.clientId}`, locks))
        context.print(line);
      return;
    }
    case 'client secret add': {
      if (command.jwksFile !== undefined) {
        const jwks = await readJwks(command.jwksFile);
        if (jwks.keys.length !== 1) throw failure(`${command.jwksFile} must hold the one next key`);
        const [key] = await keyCredentials(jwks, context.now());
        if (key === undefined) throw failure(`${command.jwksFile} must hold the one next key`);
        await onClient(
          `cannot add a key to client ${command.clientId}`,
          () => clients.addClientSecret(command.clientId, key),
          notFound(command.clientId),
        );
        context.print(
          `added key ${key.id} (kid ${key.key?.kid ?? ''}) to client ${command.clientId}; its other key works until removed (client secret remove)`,
        );
        return;
      }
      const { secret, stored } = newClientSecret(context.now());
      await onClient(
        `cannot add a secret to client ${command.clientId}`,
        () => clients.addClientSecret(command.clientId, stored),
        notFound(command.clientId),
      );
      context.print(
        `added secret ${stored.id} to client ${command.clientId}; its other secret works until removed (client secret remove)`,
      );
      printSecret(context, command.clientId, stored.id, secret);
      return;
    }
    case 'client secret remove':
      await onClient(`cannot remove secret ${command.secretId} of client ${command.clientId}`, () =>
        clients.removeClientSecret(command.clientId, command.secretId),
      );
      context.print(
        `removed secret ${command.secretId} of client ${command.clientId}; ` +
          `the access tokens granted with it stop ${WITHIN_BOUND}`,
      );
      return;
  }
}
