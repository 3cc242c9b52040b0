/**
 * The `platform` commands (docs/platforms.md): the carrier's registry of the platforms that act for
 * customers. A secret is generated here and printed once, on stdout, after the store holds its
 * digest, as `client add` does. A platform is of no customer, so its changes are in no customer's
 * audit trail; the operator's terminal log is their record.
 */
import * as v from 'valibot';
import { isPlatform, newClientId, type PlatformClient } from '../../lib/clients/clients.ts';
import { keyCredentials } from '../../lib/clients/jwks.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { isAppError, type Refusal } from '../../lib/errors.ts';
import { MAX_REDIRECT_URIS, redirectUrisSchema } from '../../lib/platforms/redirect-uris.ts';
import { listedSecrets, printKeys, printSecret, readJwks, WITHIN_BOUND } from './clients.ts';
import type { CommandContext } from './context.ts';
import { failure, usageError } from './errors.ts';
import type { Command } from './parse.ts';
import { printRows } from './rows.ts';

type PlatformCommand = Extract<Command, { name: `platform ${string}` }>;

/** The store's refusals (lib/errors.ts Refusal) in the operator's words. */
const REFUSED: Partial<Record<Refusal, string>> = {
  'client-exists': 'a client with this id exists',
  'no-such-redirect-uri': 'the platform has no such redirect URI',
  'redirect-uris-full': `the platform has ${MAX_REDIRECT_URIS} redirect URIs: remove one first`,
  'last-redirect-uri': 'this is the platform’s last redirect URI: add its successor first',
};

const notFound = (clientId: string) => `platform ${clientId} not found`;

/** The store's refusals as one line and exit 1; NOT_FOUND of the platform itself as notFound says. */
async function onPlatform<T>(what: string, clientId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isAppError(error)) throw error;
    if (error.reason === 'no-such-client') throw failure(notFound(clientId));
    const refused = error.reason === undefined ? undefined : REFUSED[error.reason];
    if (refused !== undefined) throw failure(`${what}: ${refused}`);
    throw error;
  }
}

/** A platform as `platform list` and `show` print it at `now`: never a digest. */
const listed = (platform: PlatformClient, now: Date) => ({
  clientId: platform.clientId,
  name: platform.name,
  scopes: [...platform.scopes],
  redirectUris: [...platform.platform.redirectUris],
  enabled: platform.enabled,
  secrets: listedSecrets(platform.secrets, now),
  dpopBoundAccessTokens: platform.dpopBoundAccessTokens === true,
  createdAt: platform.createdAt,
  lastUsedAt: platform.lastUsedAt ?? null,
});

const cellText = (column: string, value: unknown) => {
  if (column === 'scopes' || column === 'redirectUris') return (value as string[]).join(' ');
  if (column === 'secrets') return (value as { id: string }[]).map(({ id }) => id).join(', ');
  if (column === 'enabled') return value === true ? 'enabled' : 'disabled';
  if (column === 'lastUsedAt') return value === null ? 'never' : String(value);
  if (column === 'name') return JSON.stringify(value);
  return String(value);
};

/**
 * Every URI by the target's rules (lib/platforms/redirect-uris.ts), before anything is read or
 * written: a usage error (exit 2), as any other invalid argument, naming the URI by its position.
 */
function checkRedirectUris(context: CommandContext, uris: readonly string[]) {
  const checked = v.safeParse(redirectUrisSchema({ allowLoopback: context.target.kind === 'local' }), uris);
  if (checked.success) return;
  const [issue] = checked.issues;
  const position = issue?.path?.[0]?.key;
  const which = typeof position === 'number' ? `redirect URI ${position + 1}` : '--redirect-uri';
  throw usageError(`invalid ${which}: ${issue?.message ?? 'not accepted'}`);
}

/** The platform, or a failure naming it: a customer's API client is no platform. */
async function existing(context: CommandContext, clientId: string): Promise<PlatformClient> {
  const found = await context.clients().findClient(clientId);
  if (found === null || !isPlatform(found)) throw failure(notFound(clientId));
  return found;
}

export async function runPlatformCommand(command: PlatformCommand, context: CommandContext): Promise<void> {
  const clients = context.clients();
  switch (command.name) {
    case 'platform add': {
      checkRedirectUris(context, command.redirectUris);
      const clientId = newClientId();
      const keys =
        command.jwksFile === undefined
          ? undefined
          : await keyCredentials(await readJwks(command.jwksFile), context.now());
      const issued = keys === undefined ? newClientSecret(context.now()) : undefined;
      await onPlatform(`cannot register platform ${clientId}`, clientId, () =>
        clients.createPlatform({
          clientId,
          name: command.platformName,
          scopes: command.scopes,
          redirectUris: command.redirectUris,
          ...(command.dpop && { dpopBoundAccessTokens: true }),
          ...(issued === undefined ? { keys: keys ?? [] } : { secret: issued.stored }),
        }),
      );
      context.print(
        `registered platform ${clientId} (${JSON.stringify(command.platformName)}), scopes ${command.scopes.join(' ')}${command.dpop ? ', DPoP-bound tokens only' : ''}`,
      );
      if (issued === undefined) printKeys(context, clientId, keys ?? []);
      else printSecret(context, clientId, issued.stored.id, issued.secret, 'the platform');
      return;
    }
    case 'platform list':
      printRows(
        context,
        (await clients.listPlatforms()).map((platform) => listed(platform, context.now())),
        ['clientId', 'name', 'scopes', 'redirectUris', 'enabled', 'secrets', 'createdAt', 'lastUsedAt'],
        cellText,
      );
      return;
    case 'platform show':
      context.print(
        JSON.stringify(listed(await existing(context, command.clientId), context.now()), null, 2),
      );
      return;
    case 'platform disable':
    case 'platform enable': {
      const enabled = command.name === 'platform enable';
      await existing(context, command.clientId);
      await onPlatform(`cannot change platform ${command.clientId}`, command.clientId, () =>
        clients.setClientEnabled(command.clientId, enabled),
      );
      context.print(
        enabled
          ? `enabled platform ${command.clientId}; the tokens its disabling revoked stay revoked`
          : `disabled platform ${command.clientId}; its access tokens stop ${WITHIN_BOUND}`,
      );
      return;
    }
    case 'platform remove':
      await existing(context, command.clientId);
      await onPlatform(`cannot remove platform ${command.clientId}`, command.clientId, () =>
        clients.removeClient(command.clientId),
      );
      context.print(`removed platform ${command.clientId}; its access tokens stop ${WITHIN_BOUND}`);
      return;
    case 'platform redirect-uri add':
    case 'platform redirect-uri remove': {
      const adding = command.name === 'platform redirect-uri add';
      if (adding) checkRedirectUris(context, [command.uri]);
      const changed = await onPlatform(
        `cannot change the redirect URIs of platform ${command.clientId}`,
        command.clientId,
        () =>
          clients.changeRedirectUris(
            command.clientId,
            adding ? { add: command.uri } : { remove: command.uri },
          ),
      );
      context.print(`platform ${command.clientId} redirects to: ${changed.platform.redirectUris.join(' ')}`);
      return;
    }
  }
}
