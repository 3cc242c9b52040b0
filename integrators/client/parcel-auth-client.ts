/**
 * A client for the parcel carrier's API. It gets an access token (password login or OAuth 2.0
 * client credentials), keeps it, renews it before it expires, and sends it with each call.
 * It needs nothing but the platform's fetch, AbortSignal and setTimeout: copy this one file.
 * How to use it, and the rules it follows: docs/integrators.md.
 *
 * It never logs. Tokens, the password and the client secret live in private fields only; no
 * error it throws carries them in its message, its fields or its cause. It follows no redirect
 * (a redirected POST would carry the password or refresh token on) and reads no body past a cap.
 */

/** A user's username and password: `/login` (or `/login-extended`), then `/token/refresh`. */
export interface PasswordCredentials {
  readonly kind: 'password';
  readonly username: string;
  readonly password: string;
  /** Which login route to call; `login-extended` needs a user linked to a customer. Default `login`. */
  readonly loginRoute?: 'login' | 'login-extended';
}

/** An API client's id and secret: the OAuth 2.0 client credentials grant at `/oauth/token`. */
export interface ClientCredentials {
  readonly kind: 'client_credentials';
  readonly clientId: string;
  readonly clientSecret: string;
  /** Ask for some of the client's scopes only, e.g. `['tracking:read']`. Default: all of them. */
  readonly scope?: readonly string[];
}

export interface ParcelClientOptions {
  /** The API with its version, e.g. `https://api.example.com/prod/api/v1`; plain http on loopback only. */
  readonly baseUrl: string;
  readonly credentials: PasswordCredentials | ClientCredentials;
  /** A call's time limit, its renewal, retries and waits included. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Attempts of a call answered 429 or 503, the first included. Default 3. */
  readonly maxAttempts?: number;
  /** The longest Retry-After the client waits for; a longer one is returned to the caller. Default 30 000 ms. */
  readonly maxRetryAfterMs?: number;
  /** The longest answer body `json` reads, in bytes; a longer one rejects unread. Default 1 MiB. */
  readonly maxResponseBytes?: number;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** The clock token lifetimes are measured with, epoch milliseconds. Default: Date.now. */
  readonly now?: () => number;
}

/** A request body the client can send again (a retry): no streams. */
export type ReplayableBody = string | URLSearchParams | Blob | FormData | ArrayBuffer;

export interface ParcelRequestInit extends Omit<RequestInit, 'body' | 'signal'> {
  readonly body?: ReplayableBody;
  /** A value to send as JSON (sets Content-Type); instead of `body`. */
  readonly json?: unknown;
  readonly signal?: AbortSignal;
  /** This call's time limit instead of the client's. */
  readonly timeoutMs?: number;
  /**
   * Whether sending the request twice does no harm, so that a 503 may be retried. Default:
   * true for GET, HEAD, OPTIONS, PUT and DELETE. A 429 is always retried: nothing was done.
   */
  readonly idempotent?: boolean;
}

export interface ParcelJsonInit extends ParcelRequestInit {
  /** The longest body this call reads, in bytes, instead of the client's `maxResponseBytes`. */
  readonly maxResponseBytes?: number;
}

/** An RFC 9457 problem, as the service answers its errors. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status?: number;
  readonly detail?: string;
  readonly invalidParams?: readonly { readonly name: string; readonly reason: string }[];
}

export type Operation = 'login' | 'refresh' | 'client-credentials' | 'logout' | 'request';

export interface ParcelApiErrorInit {
  readonly operation: Operation;
  readonly status: number;
  readonly problem?: Problem | undefined;
  readonly oauthError?: string | undefined;
  readonly oauthErrorDescription?: string | undefined;
  readonly retryAfterSeconds?: number | undefined;
  /** Instead of the message made from the above. */
  readonly message?: string;
}

/**
 * A refused or failed call. It holds what the service said (status, problem, the token
 * endpoint's RFC 6749 `error`) and never a token, password or secret. Network failures,
 * aborts and timeouts are not this: fetch's own errors and the signal's reason pass through.
 */
export class ParcelApiError extends Error {
  override readonly name = 'ParcelApiError';
  readonly operation: Operation;
  readonly status: number;
  readonly problem: Problem | undefined;
  /** The token endpoint's RFC 6749 error code: `invalid_client`, `invalid_scope`, ... */
  readonly oauthError: string | undefined;
  readonly oauthErrorDescription: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ParcelApiErrorInit) {
    const said = init.problem?.title ?? init.oauthError;
    super(init.message ?? `${init.operation} failed: ${init.status}${said === undefined ? '' : ` ${said}`}`);
    this.operation = init.operation;
    this.status = init.status;
    this.problem = init.problem;
    this.oauthError = init.oauthError;
    this.oauthErrorDescription = init.oauthErrorDescription;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** The access token the client holds, and when to renew it (this client's clock). */
interface Held {
  readonly token: string;
  readonly refreshToken: string | undefined;
  readonly renewAt: number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Token and error answers are a few hundred bytes; a server sending more is broken or hostile. */
const MAX_SMALL_ANSWER_BYTES = 64 * 1024;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** Waited for a 429 or 503 without Retry-After. */
const DEFAULT_RETRY_MS = 1000;

export class ParcelClient {
  readonly #base: URL;
  readonly #credentials: PasswordCredentials | ClientCredentials;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #maxRetryAfterMs: number;
  readonly #maxResponseBytes: number;
  #held: Held | undefined;
  #renewal: Promise<Held> | undefined;

  constructor(options: ParcelClientOptions) {
    const base = new URL(options.baseUrl);
    // The URL is not quoted in these messages: it may carry credentials.
    if (base.username !== '' || base.password !== '')
      throw new TypeError('baseUrl must not contain credentials');
    if (base.protocol !== 'https:' && !(base.protocol === 'http:' && LOOPBACK.has(base.hostname)))
      throw new TypeError('baseUrl must be https (plain http only on 127.0.0.1, localhost or [::1])');
    base.pathname = base.pathname.replace(/\/+$/, '');
    this.#base = base;
    this.#credentials = options.credentials;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    this.#maxResponseBytes = byteCount(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES);
  }

  /**
   * Calls `path` (under baseUrl, e.g. `/tracking/12345678901234`) with the access token, as
   * fetch does: any status resolves but a redirect. A 401 renews the token and retries once; a
   * 429 or 503 is retried after its Retry-After, up to maxAttempts. Rejects with a
   * ParcelApiError on a 3xx (but 304) and when no token can be had, and with the signal's
   * reason on abort or timeout. `init.redirect` is ignored: no redirect is ever followed.
   */
  async fetch(path: string, init: ParcelRequestInit = {}): Promise<Response> {
    const url = this.#url(path);
    const { json, signal: callerSignal, timeoutMs, idempotent, ...rest } = init;
    const headers = new Headers(rest.headers);
    const body = json === undefined ? rest.body : JSON.stringify(json);
    if (json !== undefined) headers.set('content-type', 'application/json');
    const method = (rest.method ?? 'GET').toUpperCase();
    const timeout = timeoutMs ?? this.#timeoutMs;
    const signal = withTimeout(callerSignal, timeout);
    const deadline = Date.now() + timeout;

    let used = '';
    const send = async () => {
      used = await this.#accessToken(signal);
      headers.set('authorization', `Bearer ${used}`);
      return this.#send('request', url, { ...rest, method, headers, body: body ?? null, signal });
    };
    const retry503 = idempotent ?? IDEMPOTENT.has(method);
    const first = await this.#withRetries(send, signal, deadline, retry503);
    if (first.status !== 401) return first;
    await discard(first);
    this.#expire(used);
    return this.#withRetries(send, signal, deadline, retry503);
  }

  /**
   * `fetch`, then the body as JSON (undefined if empty); a status outside 2xx rejects with a
   * ParcelApiError carrying the problem. Give `parse` to check the body and type the result.
   * A body longer than `maxResponseBytes` (this call's, else the client's) rejects unread.
   */
  json(path: string, init?: ParcelJsonInit): Promise<unknown>;
  json<T>(path: string, init: ParcelJsonInit & { readonly parse: (body: unknown) => T }): Promise<T>;
  async json<T>(
    path: string,
    init: ParcelJsonInit & { readonly parse?: (body: unknown) => T } = {},
  ): Promise<unknown> {
    const { parse, maxResponseBytes, ...request } = init;
    const maxBytes = byteCount(maxResponseBytes, this.#maxResponseBytes);
    const response = await this.fetch(path, request);
    if (!response.ok) throw await errorOf('request', response);
    const body = await readJson('request', response, maxBytes);
    return parse === undefined ? body : parse(body);
  }

  /**
   * A valid access token, renewed first if due: for a library that sends it itself. Prefer
   * `fetch`, which also handles a 401. Never log or store what this returns.
   */
  token(signal?: AbortSignal): Promise<string> {
    return this.#accessToken(withTimeout(signal, this.#timeoutMs));
  }

  /** Forgets the tokens; with a password login, also ends the session at the service. */
  async logout(signal?: AbortSignal): Promise<void> {
    await this.#renewal?.catch(() => undefined);
    const held = this.#held;
    this.#held = undefined;
    if (held?.refreshToken === undefined) return;
    const response = await this.#post(
      'logout',
      '/logout',
      jsonBody({ refreshToken: held.refreshToken }),
      signal,
    );
    if (!response.ok) throw await errorOf('logout', response);
    await discard(response);
  }

  async #accessToken(signal: AbortSignal): Promise<string> {
    const held = this.#held;
    if (this.#renewal === undefined && held !== undefined && this.#now() < held.renewAt) return held.token;
    this.#renewal ??= this.#obtain().finally(() => {
      this.#renewal = undefined;
    });
    return (await abortable(this.#renewal, signal)).token;
  }

  /** A 401 to `used`: renew, unless another call renewed since it was sent. */
  #expire(used: string) {
    const held = this.#held;
    if (held?.token === used) this.#held = { ...held, renewAt: Number.NEGATIVE_INFINITY };
  }

  /** Runs once for any number of concurrent callers (#accessToken shares it), with its own time limit. */
  async #obtain(): Promise<Held> {
    const credentials = this.#credentials;
    if (credentials.kind === 'client_credentials') return this.#grant(credentials);
    const refreshToken = this.#held?.refreshToken;
    if (refreshToken !== undefined) {
      try {
        return await this.#refresh(refreshToken);
      } catch (error) {
        // 401 means the session is over (spent, revoked, expired): log in again.
        if (!(error instanceof ParcelApiError && error.status === 401)) throw error;
        this.#held = undefined;
      }
    }
    return this.#login(credentials);
  }

  async #login(credentials: PasswordCredentials): Promise<Held> {
    const sentAt = this.#now();
    const route = credentials.loginRoute ?? 'login';
    const body = jsonBody({ username: credentials.username, password: credentials.password });
    return this.#keep('login', await this.#post('login', `/${route}`, body), sentAt);
  }

  async #refresh(refreshToken: string): Promise<Held> {
    const sentAt = this.#now();
    const response = await this.#post('refresh', '/token/refresh', jsonBody({ refreshToken }));
    return this.#keep('refresh', response, sentAt);
  }

  /** A login or refresh answer: the access token and, as refresh tokens rotate, always the newest refresh token. */
  async #keep(operation: 'login' | 'refresh', response: Response, sentAt: number): Promise<Held> {
    if (!response.ok) throw await errorOf(operation, response);
    const body = await readJson(operation, response, MAX_SMALL_ANSWER_BYTES);
    if (!isRecord(body) || typeof body.token !== 'string' || typeof body.refreshToken !== 'string')
      throw new ParcelApiError({
        operation,
        status: response.status,
        message: `${operation}: unexpected answer`,
      });
    const expireAt = typeof body.expireAt === 'string' ? Date.parse(body.expireAt) : Number.NaN;
    const lifetimeMs = lifetimeOf(body.token, sentAt, expireAt);
    this.#held = { token: body.token, refreshToken: body.refreshToken, renewAt: renewAt(sentAt, lifetimeMs) };
    return this.#held;
  }

  async #grant(credentials: ClientCredentials): Promise<Held> {
    const sentAt = this.#now();
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (credentials.scope !== undefined) form.set('scope', credentials.scope.join(' '));
    const basic = btoa(`${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`);
    const response = await this.#post('client-credentials', '/oauth/token', {
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (!response.ok) throw await errorOf('client-credentials', response);
    const body = await readJson('client-credentials', response, MAX_SMALL_ANSWER_BYTES);
    if (
      !isRecord(body) ||
      typeof body.access_token !== 'string' ||
      typeof body.token_type !== 'string' ||
      body.token_type.toLowerCase() !== 'bearer'
    )
      throw new ParcelApiError({
        operation: 'client-credentials',
        status: response.status,
        message: 'client-credentials: unexpected answer',
      });
    const lifetimeMs =
      typeof body.expires_in === 'number'
        ? wholeSecondsLifetime(body.expires_in)
        : lifetimeOf(body.access_token, sentAt, Number.NaN);
    this.#held = { token: body.access_token, refreshToken: undefined, renewAt: renewAt(sentAt, lifetimeMs) };
    return this.#held;
  }

  /** A POST to an authentication route, retried on 429 and 503 like any call; under its own time limit unless given one. */
  #post(
    operation: Exclude<Operation, 'request'>,
    path: string,
    init: { headers: Record<string, string>; body: string },
    signal?: AbortSignal,
  ) {
    const limited = withTimeout(signal, this.#timeoutMs);
    const deadline = Date.now() + this.#timeoutMs;
    const url = this.#url(path);
    const send = () => this.#send(operation, url, { method: 'POST', ...init, signal: limited });
    // A refresh that rotated but answered 503, sent again within the stage's grace window
    // (30 s), gets the session's current tokens; later it is reuse, and the 401 that follows
    // makes #obtain log in again, which is what the caller wants anyway.
    return this.#withRetries(send, limited, deadline, true);
  }

  async #withRetries(
    send: () => Promise<Response>,
    signal: AbortSignal,
    deadline: number,
    retry503: boolean,
  ): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const response = await send();
      const retryable = response.status === 429 || (response.status === 503 && retry503);
      if (!retryable || attempt >= this.#maxAttempts) return response;
      const waitMs = retryAfterMs(response.headers.get('retry-after')) ?? DEFAULT_RETRY_MS;
      if (waitMs > this.#maxRetryAfterMs || Date.now() + waitMs >= deadline) return response;
      await discard(response);
      await sleep(waitMs, signal);
    }
  }

  /**
   * Every request leaves through here, to a URL from #url (the API's origin). No redirect is
   * followed: a 307 or 308 would resend the login body or refresh token wherever it points,
   * https to plain http included. So any 3xx but 304 is refused, its body unread.
   */
  async #send(operation: Operation, url: URL, init: RequestInit): Promise<Response> {
    const response = await this.#fetch(url, { ...init, redirect: 'manual' });
    // A `fetch` option that follows anyway: its answer comes from elsewhere, so it is refused too.
    const target = response.redirected
      ? originOf(response.url)
      : response.type === 'opaqueredirect'
        ? 'an origin the platform hides'
        : response.status >= 300 && response.status < 400 && response.status !== 304
          ? originOf(response.headers.get('location'), url)
          : undefined;
    if (target === undefined) return response;
    await discard(response);
    // The target's origin only: its path or query may carry something.
    throw new ParcelApiError({
      operation,
      status: response.status,
      message: `${operation} refused a redirect: ${response.status} to ${target}`,
    });
  }

  #url(path: string): URL {
    if (!path.startsWith('/')) throw new TypeError('path must start with "/" and is taken under baseUrl');
    const url = new URL(this.#base.pathname + path, this.#base.origin);
    // The token goes to the API's origin only.
    if (url.origin !== this.#base.origin) throw new TypeError('path leaves the API origin');
    return url;
  }
}

/**
 * How long a token lives from `sentAt`, in this client's clock. From the JWT's `exp - iat`
 * when it has both, so a skewed local clock does not matter; else from `expireAt` or `exp`.
 * The payload is decoded, not verified: it only schedules the renewal, and the service
 * verifies every token it gets.
 */
function lifetimeOf(token: string, sentAt: number, expireAt: number): number {
  const claims = jwtClaims(token);
  if (claims.exp !== undefined && claims.iat !== undefined)
    return wholeSecondsLifetime(claims.exp - claims.iat);
  if (!Number.isNaN(expireAt)) return expireAt - sentAt;
  if (claims.exp !== undefined) return claims.exp * 1000 - sentAt;
  return 0;
}

/**
 * A lifetime given in whole seconds, less one: `iat` is the issue time rounded down, so the
 * token may have been issued up to a second before the server's count starts.
 */
const wholeSecondsLifetime = (seconds: number) => Math.max(0, seconds - 1) * 1000;

/** Renew a margin before expiry: 10 % of the lifetime, at most a minute. */
const renewAt = (sentAt: number, lifetimeMs: number) =>
  sentAt + lifetimeMs - Math.min(60_000, lifetimeMs / 10);

function jwtClaims(token: string): { exp?: number; iat?: number } {
  const payload = token.split('.')[1];
  if (payload === undefined) return {};
  try {
    const base64 = payload.replaceAll('-', '+').replaceAll('_', '/');
    const bytes = Uint8Array.from(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')), (c) =>
      c.charCodeAt(0),
    );
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (!isRecord(claims)) return {};
    return {
      ...(typeof claims.exp === 'number' && { exp: claims.exp }),
      ...(typeof claims.iat === 'number' && { iat: claims.iat }),
    };
  } catch {
    return {};
  }
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 section 10.2.3), in milliseconds. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number.parseInt(text, 10) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function errorOf(operation: Operation, response: Response): Promise<ParcelApiError> {
  const text = await readText(response, MAX_SMALL_ANSWER_BYTES).catch(() => '');
  let body: unknown;
  try {
    body = text === undefined ? undefined : parseJson(text);
  } catch {
    // Not JSON: the status alone says what happened.
  }
  const retryAfter = retryAfterMs(response.headers.get('retry-after'));
  return new ParcelApiError({
    operation,
    status: response.status,
    ...(text === undefined && {
      message: `${operation} failed: ${response.status}, its answer longer than ${MAX_SMALL_ANSWER_BYTES} bytes (not read)`,
    }),
    problem: problemOf(body),
    oauthError: isRecord(body) && typeof body.error === 'string' ? body.error : undefined,
    oauthErrorDescription:
      isRecord(body) && typeof body.error_description === 'string' ? body.error_description : undefined,
    retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
  });
}

function problemOf(body: unknown): Problem | undefined {
  if (!isRecord(body) || typeof body.type !== 'string' || typeof body.title !== 'string') return undefined;
  const invalidParams = Array.isArray(body.invalidParams)
    ? body.invalidParams.flatMap((param: unknown) =>
        isRecord(param) && typeof param.name === 'string' && typeof param.reason === 'string'
          ? [{ name: param.name, reason: param.reason }]
          : [],
      )
    : undefined;
  return {
    type: body.type,
    title: body.title,
    ...(typeof body.status === 'number' && { status: body.status }),
    ...(typeof body.detail === 'string' && { detail: body.detail }),
    ...(invalidParams !== undefined && { invalidParams }),
  };
}

/** The body as JSON (undefined if empty); a ParcelApiError, unread, if longer than `maxBytes`. */
async function readJson(operation: Operation, response: Response, maxBytes: number): Promise<unknown> {
  const text = await readText(response, maxBytes);
  if (text === undefined)
    throw new ParcelApiError({
      operation,
      status: response.status,
      message: `${operation}: its ${response.status} answer is longer than ${maxBytes} bytes (not read)`,
    });
  return parseJson(text);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text near the fault: it could be part of a token.
    throw new SyntaxError('the answer is not valid JSON');
  }
}

/**
 * The body as text, or undefined when it is longer than `maxBytes`: refused on its
 * Content-Length before any of it is read, else cut where it passes the cap. A hostile server
 * could otherwise send gigabytes for the client to hold.
 */
async function readText(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number.parseInt(response.headers.get('content-length') ?? '', 10);
  if (declared > maxBytes) {
    await discard(response);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** The origin of a Location, resolved as fetch would; never its path or query. */
function originOf(location: string | null, base?: URL): string {
  if (location === null) return 'no Location';
  try {
    return new URL(location, base).origin;
  } catch {
    return 'an unreadable Location';
  }
}

/** A byte cap given as an option: a whole number, or the default when not given. */
function byteCount(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new TypeError('maxResponseBytes must be a whole number of bytes');
  return value;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const jsonBody = (value: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/** application/x-www-form-urlencoded, as RFC 6749 section 2.3.1 encodes the id and secret before Basic. */
const formEncode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);

/** Frees the connection of an answer the caller will not see. */
const discard = (response: Response) => response.body?.cancel().catch(() => undefined);

const withTimeout = (signal: AbortSignal | undefined, ms: number) =>
  signal === undefined ? AbortSignal.timeout(ms) : AbortSignal.any([signal, AbortSignal.timeout(ms)]);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Settles with `promise`, or rejects with the signal's reason when it aborts first; the
 * promise itself runs on (a shared renewal serves the other callers).
 */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
