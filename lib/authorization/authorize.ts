/**
 * The authorization endpoint's flow (docs/platforms.md, "The authorization flow"): a pushed
 * request (RFC 9126) or a plain one opens the stage's own page in one browser; the customer's
 * administrator signs in there (checked as a login), sees the platform, the scopes in words and
 * the customer, and approves or denies. Approving makes or updates the customer's connection and
 * a code (60 s, single use) sent to the platform's redirect URI with `state` and `iss`. The
 * administrator signs in with a password (checked as a login) or a passkey (checked as the
 * passkey sign-in); under the customer's passkey policy only the passkey's sign-in approves.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { UserRecord } from '../accounts/repository.ts';
import { userActor } from '../audit/audit.ts';
import type { AuditRecorder } from '../audit/recorder.ts';
import type { CredentialDeps } from '../auth/login.ts';
import type { PasskeyCheckDeps } from '../auth/passkey-login.ts';
import { authenticateClient, type ClientAuthDeps, clientCredentials } from '../clients/client-auth.ts';
import { type ClientReader, isPlatform, type PlatformClient } from '../clients/clients.ts';
import type { ConnectionStore } from '../connections/connections.ts';
import type { SecurityPolicies } from '../customer/administration.ts';
import { refusesPasswordSession } from '../customer/administrator.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { RelyingParty } from '../passkeys/webauthn.ts';
import type { QuotaState } from '../quota.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import { ADMIN_SCOPE, type Scope, userTokenScopes } from '../scopes.ts';
import { type Clock, epochSeconds, systemClock } from '../time.ts';
import { type PageForm, REQUEST_ID, signInOnPage } from './page-sign-in.ts';
import { checkAuthorizationRequest, redirectTo, registeredRedirectUri } from './request.ts';
import type { AuthorizationStore, PendingAuthorization } from './store.ts';

/** RFC 9126 section 2.2: `urn:ietf:params:oauth:request_uri:` and our random id. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** How long a pushed request waits to be opened (RFC 9126 section 2.2 suggests 5 to 600 seconds). */
export const PUSHED_REQUEST_SECONDS = 90;
/** How long an opened request waits for its sign-in and decision. */
export const INTERACTION_SECONDS = 600;
/** How long a code lives (RFC 6749 section 4.1.2 recommends 10 minutes at most). */
export const CODE_SECONDS = 60;

const newId = () => randomBytes(32).toString('base64url');
export const digestOf = (value: string) => createHash('sha256').update(value).digest('base64url');

export interface AuthorizeDeps {
  readonly clients: ClientReader;
  /** The pushed request's client authentication (as at the token endpoint). */
  readonly clientAuth: ClientAuthDeps;
  readonly store: AuthorizationStore;
  readonly connections: Pick<ConnectionStore, 'approve'>;
  /** The customer's audit trail: each approval, by whom and from where. */
  readonly recorder: AuditRecorder;
  /** The page's sign-in: a login's checks (throttle, known sources, one generic failure). */
  readonly credentials: CredentialDeps;
  /** The page's passkey sign-in: the passkey sign-in's checks (lib/auth/passkey-login.ts). */
  readonly passkeys: PasskeyCheckDeps;
  /** The customers' security policies: under a passkey policy the page's password sign-in approves nothing. */
  readonly policies: Pick<SecurityPolicies, 'find'>;
  /** `iss` of every answer at the redirect URI (RFC 9207). */
  readonly issuer: string;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
  readonly clock?: Clock;
}

/** What the page shows of a request. */
export interface RequestView {
  readonly id: string;
  readonly platformName: string;
  readonly scopes: readonly Scope[];
}

export type Screen =
  /** No redirect: the client or the redirect URI is not known to be right, or the request is gone. */
  | { readonly page: 'problem'; readonly status: 400 | 403; readonly message: string }
  | { readonly page: 'redirect'; readonly location: string }
  | {
      readonly page: 'sign-in';
      /** 200 for a wrong password too, as a login form answers (401 would need an HTTP challenge). */
      /** 403 for a password's sign-in that the customer's passkey policy refuses. */
      readonly status: 200 | 403 | 429;
      readonly view: RequestView;
      readonly error?: string;
      readonly quota?: readonly QuotaState[];
      readonly retryAfterSeconds?: number;
    }
  | {
      readonly page: 'consent';
      readonly view: RequestView;
      readonly username: string;
      readonly customerId: string;
      /** Where the decision redirects: its form must be allowed to go there. */
      readonly redirectOrigin: string;
    }
  | { readonly page: 'not-admin'; readonly view: RequestView; readonly customerId: string };

const problem = (message: string, status: 400 | 403 = 400): Screen => ({ page: 'problem', status, message });
/** Under the customer's passkey policy a password's sign-in approves nothing: the page asks for the passkey. */
const passkeyRequired = (view: RequestView): Screen => ({
  page: 'sign-in',
  status: 403,
  view,
  error: 'Your company requires its administrators to sign in with a passkey. Sign in with your passkey.',
});

const GONE = problem('This authorization request is unknown or has expired. Start again from the platform.');
const OTHER_BROWSER = problem(
  'This authorization request was opened in another browser, or its cookie is missing. Start again from the platform.',
  403,
);

const viewOf = (pending: PendingAuthorization): RequestView => ({
  id: pending.id,
  platformName: pending.platformName,
  scopes: pending.request.scopes,
});

const signInScreen = (pending: PendingAuthorization): Screen => ({
  page: 'sign-in',
  status: 200,
  view: viewOf(pending),
});

/** The enabled platform of that id, or null (an unknown, disabled or customer's client). */
async function platformOf(deps: AuthorizeDeps, clientId: string | undefined): Promise<PlatformClient | null> {
  if (clientId === undefined || clientId === '' || clientId.length > 64) return null;
  const client = await deps.clients.findClient(clientId);
  return client !== null && isPlatform(client) && client.enabled ? client : null;
}

/**
 * POST /oauth/par (RFC 9126): the platform authenticates as at the token endpoint and pushes its
 * request; errors are the token endpoint's JSON (section 2.3).
 */
export async function pushRequest(
  deps: AuthorizeDeps,
  input: {
    readonly form: Record<string, string>;
    readonly authorization: readonly string[];
    readonly sourceIp: string;
  },
): Promise<{
  readonly requestUri: string;
  readonly expiresIn: number;
  readonly quota: readonly QuotaState[];
}> {
  const credentials = clientCredentials(input.form, input.authorization);
  const { client, quota } = await authenticateClient(deps.clientAuth, {
    ...credentials,
    sourceIp: input.sourceIp,
  });
  if (!isPlatform(client))
    throw new AppError('UNAUTHORIZED_CLIENT', {
      quota,
      detail: 'Only a platform may push an authorization request.',
    });
  if (input.form.request_uri !== undefined || input.form.request !== undefined)
    throw new AppError('VALIDATION_FAILED', {
      quota,
      detail: 'Send the parameters themselves, not request or request_uri.',
    });
  const redirectUri = registeredRedirectUri(client, input.form);
  if (redirectUri === undefined)
    throw new AppError('VALIDATION_FAILED', {
      quota,
      detail: 'The redirect_uri is not one the platform registered.',
    });
  const checked = checkAuthorizationRequest(client, redirectUri, input.form);
  if (!checked.ok)
    throw new AppError(checked.problem.error === 'invalid_scope' ? 'INVALID_SCOPE' : 'VALIDATION_FAILED', {
      quota,
      detail: checked.problem.description,
    });
  const now = (deps.clock ?? systemClock)();
  const id = newId();
  await deps.store.push({
    id,
    request: checked.request,
    platformName: client.name,
    expiresAt: epochSeconds(now) + PUSHED_REQUEST_SECONDS,
  });
  deps.logger.info('authorization request pushed', { clientId: client.clientId, sourceIp: input.sourceIp });
  return { requestUri: `${REQUEST_URI_PREFIX}${id}`, expiresIn: PUSHED_REQUEST_SECONDS, quota };
}

/**
 * GET /oauth/authorize: a pushed request (`client_id` and `request_uri`) or a plain one, opened
 * in the browser whose cookie digest is `browser`; the sign-in page, or an answer at the redirect
 * URI for a request that is wrong once its client and redirect URI are known to be right.
 */
export async function openAuthorization(
  deps: AuthorizeDeps,
  input: { readonly query: Readonly<Record<string, string>>; readonly browser: string },
): Promise<Screen> {
  const { query, browser } = input;
  const now = (deps.clock ?? systemClock)();
  const until = epochSeconds(now) + INTERACTION_SECONDS;
  const requestUri = query.request_uri;
  if (requestUri !== undefined) {
    const id = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    const pending = REQUEST_ID.test(id) ? await deps.store.get(id, now) : null;
    // RFC 9126 section 4: the client_id must be the pushing client's.
    if (pending === null || pending.request.clientId !== query.client_id || pending.decidedAt !== undefined)
      return GONE;
    if (pending.browser === browser) return signInScreen(pending);
    if (pending.browser !== undefined || !(await deps.store.open(id, browser, until, now)))
      return OTHER_BROWSER;
    return signInScreen({ ...pending, browser, expiresAt: until });
  }
  const client = await platformOf(deps, query.client_id);
  if (client === null) return problem('The client_id is not a platform registered with this service.');
  const redirectUri = registeredRedirectUri(client, query);
  if (redirectUri === undefined) return problem('The redirect_uri is not one the platform registered.');
  const checked = checkAuthorizationRequest(client, redirectUri, query);
  if (!checked.ok) {
    const { error, description } = checked.problem;
    return {
      page: 'redirect',
      location: redirectTo(redirectUri, deps.issuer, {
        error,
        error_description: description,
        state: checked.state,
      }),
    };
  }
  const pending: PendingAuthorization = {
    id: newId(),
    request: checked.request,
    platformName: client.name,
    expiresAt: until,
    browser,
  };
  await deps.store.push(pending);
  return signInScreen(pending);
}

/**
 * An administrator of its customer (of `customerId`, when given) who may approve `scopes`: only
 * scopes it holds itself, as the self-service API gives a client none beyond the administrator's.
 */
const administers = (
  user: UserRecord | null,
  scopes: readonly Scope[],
  customerId?: string,
): user is UserRecord & { customerId: string } => {
  if (user?.enabled !== true || user.customerId === null) return false;
  if (customerId !== undefined && user.customerId !== customerId) return false;
  const own = userTokenScopes(user);
  return own.includes(ADMIN_SCOPE) && scopes.every((scope) => own.includes(scope));
};

/** POST /oauth/authorize: the page's sign-in, approval or denial, in the browser it was opened in. */
export async function submitPage(
  deps: AuthorizeDeps,
  input: {
    readonly form: PageForm;
    readonly browser: string;
    /** The digest of the cookie a sign-in answers with: the request is bound to it from then on. */
    readonly nextBrowser: string;
    readonly sourceIp: string;
    /** Whose passkeys the page takes: the host it is served from (`relyingPartyOf`). */
    readonly relyingParty: RelyingParty;
  },
): Promise<Screen> {
  const { form, browser } = input;
  const now = (deps.clock ?? systemClock)();
  const pending = await deps.store.get(form.request, now);
  if (pending === null || pending.decidedAt !== undefined) return GONE;
  if (pending.browser !== browser) return OTHER_BROWSER;
  const view = viewOf(pending);
  if (form.action === 'sign-in' || form.action === 'passkey') {
    const checked = await signInOnPage(deps, { ...input, form });
    if ('failure' in checked) return { page: 'sign-in', view, ...checked.failure };
    const { user, method } = checked;
    if (!administers(user, pending.request.scopes)) {
      deps.logger.info('authorization sign-in of a non-administrator', {
        clientId: pending.request.clientId,
      });
      return { page: 'not-admin', view, customerId: user.customerId ?? '' };
    }
    const signingIn = { username: user.username, customerId: user.customerId, sourceIp: input.sourceIp };
    if (method === 'password' && (await refusesPasswordSession(deps, signingIn)))
      return passkeyRequired(view);
    const who = { username: user.username, customerId: user.customerId, at: issuedAtFor(user, now), method };
    if (!(await deps.store.signIn(pending.id, browser, input.nextBrowser, who, now))) return GONE;
    return {
      page: 'consent',
      view,
      username: user.username,
      customerId: user.customerId,
      redirectOrigin: new URL(pending.request.redirectUri).origin,
    };
  }
  const signedIn = pending.signedIn;
  if (signedIn === undefined) return signInScreen(pending);
  const { request } = pending;
  if (form.action === 'deny') {
    if (!(await deps.store.decide(pending.id, browser, now))) return GONE;
    deps.metrics.count({ name: 'AuthorizationDecided', decision: 'Denied' });
    deps.logger.info('authorization denied', { clientId: request.clientId, customerId: signedIn.customerId });
    return {
      page: 'redirect',
      location: redirectTo(request.redirectUri, deps.issuer, {
        error: 'access_denied',
        state: request.state,
      }),
    };
  }
  // The administration as it is now: it may have ended since the sign-in.
  const user = await deps.credentials.users.findByUsername(signedIn.username);
  if (!administers(user, request.scopes, signedIn.customerId))
    return { page: 'not-admin', view, customerId: signedIn.customerId };
  // Revoked since the sign-in (a new password, signed out everywhere): the sign-in is too.
  if (user.revokedBefore > signedIn.at)
    return { page: 'sign-in', status: 200, view, error: 'Your sign-in has ended. Sign in again.' };
  // The policy as it is now: it may have been turned on since the sign-in.
  const approving = { username: user.username, customerId: signedIn.customerId, sourceIp: input.sourceIp };
  if (signedIn.method === 'password' && (await refusesPasswordSession(deps, approving)))
    return passkeyRequired(view);
  // The connection and the code before the decision: a failure leaves the request undecided for
  // another press, and a code no decision released is never sent.
  const connection = await deps.connections.approve({
    clientId: request.clientId,
    customerId: signedIn.customerId,
    scopes: request.scopes,
    approvedBy: user.username,
    at: now,
  });
  const code = newId();
  await deps.store.createCode({
    digest: digestOf(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    connectionId: connection.connectionId,
    customerId: signedIn.customerId,
    scopes: request.scopes,
    approvedAt: epochSeconds(now),
    expiresAt: epochSeconds(now) + CODE_SECONDS,
  });
  if (!(await deps.store.decide(pending.id, browser, now))) return GONE;
  deps.metrics.count({ name: 'AuthorizationDecided', decision: 'Approved' });
  await deps.recorder.record({
    customerId: signedIn.customerId,
    type: 'connection.approved',
    actor: userActor(user.username),
    source: 'api',
    ...(input.sourceIp !== '' && { sourceIp: input.sourceIp }),
    clientId: request.clientId,
    connectionId: connection.connectionId,
    name: pending.platformName,
  });
  deps.logger.info('authorization approved', {
    clientId: request.clientId,
    customerId: signedIn.customerId,
    connectionId: connection.connectionId,
    approvedBy: user.username,
    sourceIp: input.sourceIp,
  });
  return {
    page: 'redirect',
    location: redirectTo(request.redirectUri, deps.issuer, { code, state: request.state }),
  };
}
