/**
 * The API beside this page and the administrator's session: the login, its refresh and its end,
 * and every call of /api/v1/customer/* with the session's access token.
 *
 * The tokens live in this module's variables only, never in storage or a cookie: a page reload
 * or a closed tab forgets them, and no other script (the CSP allows none) can read them. Every
 * request omits credentials: the bearer token the page adds is the only one, so there is nothing
 * for another site to forge.
 */

/** The API beside this page: /console → /api/v1, /dev/console → /dev/api/v1 (a stage's path). */
const API = `${location.pathname.replace(/\/console\/?$/, '')}/api/v1`;
// The problem types the page acts on (lib/http/problems.ts; tests/unit/console.test.ts holds the
// bundle to the server's).
export const RECENT_LOGIN_REQUIRED = 'urn:parcel-auth:problem:recent-login-required';
export const INSUFFICIENT_SCOPE = 'urn:parcel-auth:problem:insufficient-scope';
/** The scope a 403 insufficient-scope names when the caller is no administrator (lib/scopes.ts). */
export const ADMIN_SCOPE = 'customer:admin';

/** The signed-in administrator. */
export interface Session {
  readonly username: string;
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** A problem+json body, as far as the page reads it. */
interface Problem {
  readonly type?: unknown;
  readonly title?: unknown;
  readonly detail?: unknown;
  readonly invalidParams?: unknown;
}

interface Answer {
  readonly status: number;
  readonly ok: boolean;
  /** The parsed body, or null for none or one that is not JSON. */
  readonly json: unknown;
  readonly retryAfter: string | null;
  /** The scope a 403 names in its WWW-Authenticate (RFC 6750 §3), if any. */
  readonly requiredScope: string | null;
  /** A 401's step-up (RFC 9470 `insufficient_user_authentication`): a passkey's session is needed. */
  readonly stepUp: boolean;
}

/** An answer of the API that is not a success, with its problem+json body if it has one. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem | null;
  readonly requiredScope: string | null;

  constructor(answer: Answer) {
    super(problemText(answer));
    this.status = answer.status;
    this.problem = problemOf(answer.json);
    this.requiredScope = answer.requiredScope;
  }
}
/** The session is over (the refresh token was refused): sign in again. */
export class SignedOut extends Error {}
/** A step-up's passkey signed in another user than the session's. */
export class OtherUsersPasskey extends Error {}

let session: Session | null = null;
let refreshing: Promise<boolean> | null = null;
/** How a call that needs a recent login gets one: set by the page (the password dialog). */
let confirmRecentLogin: () => Promise<void> = () => Promise.reject(new SignedOut());
/** How a call refused a password's session gets a passkey's: set by the page. */
let confirmPasskey: () => Promise<void> = () => Promise.reject(new SignedOut());

export const currentSession = () => session;

/** Forgets the session's tokens here; the API's session is ended by logOut. */
export function endSession() {
  session = null;
}

/** Sets how a call that needs a recent login asks for the password again. */
export function onRecentLoginRequired(confirm: () => Promise<void>) {
  confirmRecentLogin = confirm;
}

/** Sets how a call refused a password's session (the customer requires passkeys) asks for the passkey. */
export function onPasskeyRequired(confirm: () => Promise<void>) {
  confirmPasskey = confirm;
}

const problemOf = (json: unknown): Problem | null =>
  typeof json === 'object' && json !== null ? (json as Problem) : null;

function problemText({ status, json, retryAfter }: Answer): string {
  // The page reads Retry-After for the reader: the problem's detail can only point at it.
  if (status === 429 && retryAfter !== null) return `Too many attempts. Try again in ${retryAfter} seconds.`;
  const problem = problemOf(json);
  const text =
    typeof problem?.detail === 'string'
      ? problem.detail
      : typeof problem?.title === 'string'
        ? problem.title
        : `The service answered ${status}.`;
  const params = Array.isArray(problem?.invalidParams)
    ? problem.invalidParams
        .map(
          (param: { readonly name?: unknown; readonly reason?: unknown }) => `${param.name} ${param.reason}`,
        )
        .join('; ')
    : '';
  return params === '' ? text : `${text} (${params})`;
}

async function send(method: string, path: string, body?: unknown, accessToken?: string): Promise<Answer> {
  const headers: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  if (accessToken !== undefined) headers.Authorization = `Bearer ${accessToken}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  const authenticate = response.headers.get('WWW-Authenticate') ?? '';
  const challenge = /\bscope="([^"]*)"/.exec(authenticate);
  return {
    status: response.status,
    ok: response.ok,
    json,
    retryAfter: response.headers.get('Retry-After'),
    requiredScope: challenge?.[1] ?? null,
    stepUp: response.status === 401 && authenticate.includes('error="insufficient_user_authentication"'),
  };
}

/** The tokens of a login or a refresh (POST /login, POST /token/refresh). */
interface Tokens {
  readonly token: string;
  readonly refreshToken: string;
}

async function logIn(username: string, password: string): Promise<Session> {
  const answer = await send('POST', '/login', { username, password });
  if (!answer.ok) throw new ApiError(answer);
  const tokens = answer.json as Tokens;
  return { username, accessToken: tokens.token, refreshToken: tokens.refreshToken };
}

/** Starts the session of `username`; an ApiError (401 for a wrong password) if the login fails. */
export async function signIn(username: string, password: string) {
  session = await logIn(username, password);
}

/** The answer of a passkey sign-in: a login's tokens, and whom the passkey signed in. */
interface PasskeyTokens extends Tokens {
  readonly userName: string;
}

/**
 * Signs in with a passkey: the API's challenge, the browser's ceremony (`sign`, the WebAuthn
 * call, given the options), then the API's session of the passkey's user. An ApiError (401)
 * when the API refuses the passkey.
 */
export async function signInWithPasskey(sign: (options: unknown) => Promise<unknown>, asUser?: string) {
  const options = await send('POST', '/passkey-login/options');
  if (!options.ok) throw new ApiError(options);
  const response = await sign(options.json);
  const answer = await send('POST', '/passkey-login', { response });
  if (!answer.ok) throw new ApiError(answer);
  const tokens = answer.json as PasskeyTokens;
  // A step-up is the same administrator's: another's passkey ends the session it just began.
  if (asUser !== undefined && tokens.userName !== asUser) {
    void logOut(tokens.refreshToken);
    throw new OtherUsersPasskey();
  }
  const previous = session;
  session = { username: tokens.userName, accessToken: tokens.token, refreshToken: tokens.refreshToken };
  // A step-up replaces the session it steps up from.
  if (previous !== null) void logOut(previous.refreshToken);
  return tokens.userName;
}

/** Logs in again as the session's user, a recent login; then ends the session it replaces. */
export async function renewLogin(previous: Session, password: string) {
  session = await logIn(previous.username, password);
  void logOut(previous.refreshToken);
}

/** Ends a session at the API; a failure changes nothing here (its tokens are forgotten anyway). */
export function logOut(refreshToken: string): Promise<unknown> {
  return send('POST', '/logout', { refreshToken }).catch(() => undefined);
}

/** One refresh at a time; false when the refresh token is refused (the session is over). */
function refreshSession(): Promise<boolean> {
  if (refreshing === null) {
    const current = session;
    refreshing = (async () => {
      if (current === null) return false;
      const answer = await send('POST', '/token/refresh', { refreshToken: current.refreshToken });
      if (answer.status === 401 || answer.status === 400) return false;
      if (!answer.ok) throw new ApiError(answer);
      const tokens = answer.json as Tokens;
      if (session === current)
        session = { ...current, accessToken: tokens.token, refreshToken: tokens.refreshToken };
      return true;
    })().finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

/**
 * Calls the API as the administrator and answers its JSON, as the server's views type it
 * (lib/customer/views.ts): the page trusts its own origin's API. A 401 gets one refresh and a
 * retry; a refused refresh ends the session (SignedOut). An action that shows a secret needs a
 * recent login: on that 403 the administrator confirms the password (or a passkey), and the action is
 * retried once with the new tokens. Where the customer requires passkeys, a password's session gets
 * a 401 step-up challenge: the administrator signs in with a passkey, and the call is retried once.
 */
export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  if (session === null) throw new SignedOut();
  let answer = await send(method, path, body, session.accessToken);
  if (answer.status === 401 && !answer.stepUp) {
    if (!(await refreshSession()) || session === null) throw new SignedOut();
    answer = await send(method, path, body, session.accessToken);
  }
  // The customer requires passkeys (RFC 9470's step-up): a passkey's session, then once more.
  if (answer.stepUp) {
    await confirmPasskey();
    if (session === null) throw new SignedOut();
    answer = await send(method, path, body, session.accessToken);
  }
  if (answer.status === 401) throw new SignedOut();
  if (answer.status === 403 && problemOf(answer.json)?.type === RECENT_LOGIN_REQUIRED) {
    await confirmRecentLogin();
    answer = await send(method, path, body, session.accessToken);
  }
  if (!answer.ok) throw new ApiError(answer);
  return answer.json as T;
}
