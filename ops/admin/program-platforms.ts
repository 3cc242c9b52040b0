/**
 * The platform commands of the admin CLI (`platform …`, docs/platforms.md); what they do is
 * ops/admin/platforms.ts. A redirect URI is checked there, by the target's rules (a loopback one on
 * the local stage only), before anything is read or written.
 */
import type { Command as Program } from 'commander';
import * as v from 'valibot';
import { ClientIdSchema, ClientNameSchema } from '../../lib/clients/clients.ts';
import { isPlatformScope, PLATFORM_SCOPES } from '../../lib/platforms/platforms.ts';
import { MAX_REDIRECT_URIS } from '../../lib/platforms/redirect-uris.ts';
import { usageError } from './errors.ts';
import { group, sub } from './help.ts';
import { type Command, collect, DPOP_OPTION, JWKS_OPTION, once, scopesOf, valid } from './parse.ts';

const clientId = valid(ClientIdSchema, 'clientId');
const uri = valid(v.pipe(v.string(), v.nonEmpty('must not be empty')), 'uri');

/** The mandatory options' message (ops/admin/program.ts OPTION_RULES). */
export const PLATFORM_OPTION_RULE = `platform add needs at least one --redirect-uri <uri> and one --scope <scope> (${PLATFORM_SCOPES.join(', ')})`;

function platformScopes(values: readonly string[]) {
  const scopes = scopesOf(values, 'platform add');
  if (!scopes.every(isPlatformScope))
    throw usageError(`invalid --scope: a platform's must be one of ${PLATFORM_SCOPES.join(', ')}`);
  return scopes;
}

export function addPlatformCommands(program: Program, run: (command: Command) => void): void {
  const PLATFORMS =
    'Platforms (OAuth clients that act for the customers whose administrators approve them:\n' +
    `docs/platforms.md); a <scope> is one of ${PLATFORM_SCOPES.join(', ')}; a platform's secrets\n` +
    'and failed authentications: client secret add|remove, client unlock';
  const platform = group(program, 'platform', PLATFORMS, 'manage platforms');
  sub(
    platform,
    'add',
    PLATFORMS,
    'register a platform: prints its client id, secret id and secret on stdout, the secret only this once',
  )
    .argument('<name>', 'what a customer’s administrator is shown', valid(ClientNameSchema, 'name'))
    .requiredOption(
      '--redirect-uri <uri>',
      'where the authorization answer goes, matched exactly: https, or http://127.0.0.1:<port>/… and ' +
        'http://localhost:<port>/… on the local stage; repeated for more',
      collect,
    )
    .requiredOption('--scope <scope>', 'a scope customers may approve for it; repeated for more', collect)
    .option('--jwks <file>', JWKS_OPTION, once('jwks', String))
    .option('--dpop', DPOP_OPTION)
    .action(
      (name: string, options: { redirectUri: string[]; scope: string[]; jwks?: string; dpop?: boolean }) =>
        run({
          name: 'platform add',
          platformName: name,
          redirectUris: options.redirectUri,
          scopes: platformScopes(options.scope),
          jwksFile: options.jwks,
          dpop: options.dpop === true,
        }),
    );
  sub(
    platform,
    'list',
    PLATFORMS,
    'every platform: id, name, scopes, redirect URIs, enabled, live secrets, as JSON Lines, or a table on a terminal',
  ).action(() => run({ name: 'platform list' }));
  const byPlatform = (action: 'show' | 'disable' | 'enable' | 'remove', description: string) =>
    sub(platform, action, PLATFORMS, description)
      .argument('<clientId>', undefined, clientId)
      .action((id: string) => run({ name: `platform ${action}`, clientId: id }));
  byPlatform('show', 'print the platform as JSON (never a digest)');
  byPlatform(
    'disable',
    'refuse every grant of the platform; its access tokens stop within the stage’s revocation bound',
  );
  byPlatform('enable', 'allow its grants again (revoked tokens stay revoked)');
  byPlatform('remove', 'delete the platform; its access tokens stop as with disable');
  const redirect = group(platform, 'redirect-uri', PLATFORMS, "manage a platform's redirect URIs");
  for (const action of ['add', 'remove'] as const)
    sub(
      redirect,
      action,
      PLATFORMS,
      action === 'add'
        ? `register another redirect URI (at most ${MAX_REDIRECT_URIS})`
        : 'the URI is no longer redirected to; refused for the platform’s last one',
    )
      .argument('<clientId>', undefined, clientId)
      .argument('<uri>', undefined, uri)
      .action((id: string, value: string) =>
        run({ name: `platform redirect-uri ${action}`, clientId: id, uri: value }),
      );
}
