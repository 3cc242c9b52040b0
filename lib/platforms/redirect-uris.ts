/**
 * A platform's redirect URIs (docs/platforms.md, "Redirect URIs"): registered by the operator,
 * matched exactly at the authorization endpoint (RFC 9700 section 2.1, OAuth 2.1 section 2.3.1),
 * so a registered URI is one that compares equal to what a browser is sent to.
 */
import * as v from 'valibot';
import type { RedirectUriChange } from '../clients/clients.ts';
import { AppError } from '../errors.ts';

/** The most a platform registers: enough for a production, a staging and a few local ones. */
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Loopback redirect URIs of a native or local app (RFC 8252 section 7.3): the local stage's alone. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface RedirectUriRules {
  /** `http://127.0.0.1:<port>/…` and `http://localhost:<port>/…`: true on the local stage only. */
  readonly allowLoopback: boolean;
}

/** Why `uri` cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string, rules: RedirectUriRules): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  // Exact matching compares text: a URI written another way than a browser writes it would never match.
  if (url.href !== uri) return `must be written as ${url.href}`;
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment (RFC 6749 section 3.1.2)';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  const loopback = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (loopback) {
    if (!rules.allowLoopback) return 'must be https (a loopback http URI only on the local stage)';
    if (url.port === '') return 'must name its port (http://127.0.0.1:<port>/…)';
    return undefined;
  }
  if (url.protocol !== 'https:')
    return rules.allowLoopback
      ? 'must be https, or http on 127.0.0.1 or localhost with a port'
      : 'must be https';
  return undefined;
}

/** The redirect URIs of a registration: each by redirectUriProblem, none twice, at most MAX_REDIRECT_URIS. */
export const redirectUrisSchema = (rules: RedirectUriRules) =>
  v.pipe(
    v.array(
      v.pipe(
        v.string(),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const problem = redirectUriProblem(dataset.value, rules);
          if (problem !== undefined) addIssue({ message: problem });
        }),
      ),
    ),
    v.minLength(1, 'needs at least one redirect URI'),
    v.maxLength(MAX_REDIRECT_URIS, `may have at most ${MAX_REDIRECT_URIS} redirect URIs`),
    v.check((uris) => new Set(uris).size === uris.length, 'names a redirect URI twice'),
  );

/**
 * The redirect URIs after `change` by the rules of docs/platforms.md, or its refusal by a typed
 * reason. Adding one there already changes nothing (a rerun after a lost answer finds it so).
 */
export function redirectUrisAfter(uris: readonly string[], change: RedirectUriChange): readonly string[] {
  if ('add' in change) {
    if (uris.includes(change.add)) return uris;
    if (uris.length >= MAX_REDIRECT_URIS) throw new AppError('CONFLICT', { reason: 'redirect-uris-full' });
    return [...uris, change.add];
  }
  if (!uris.includes(change.remove)) throw new AppError('NOT_FOUND', { reason: 'no-such-redirect-uri' });
  if (uris.length === 1) throw new AppError('CONFLICT', { reason: 'last-redirect-uri' });
  return uris.filter((uri) => uri !== change.remove);
}

/** Whether the redirect URIs are as `change` leaves them. */
export const redirectUriChangeApplied = (uris: readonly string[], change: RedirectUriChange) =>
  'add' in change ? uris.includes(change.add) : !uris.includes(change.remove);
