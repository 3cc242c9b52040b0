/**
 * A client for the parcel carrier's API. It gets an access token (password login or OAuth 2.0
 * client credentials), keeps it, renews it before it expires, and sends it with each call.
 * It needs nothing but the platform's fetch, AbortSignal and setTimeout: copy this one file.
 * How to use it, and the rules it follows: docs/integrators.md.
 *
 * It never logs. Tokens, the password and the client secret live in private fields only; no
 * error it throws carries them in its message, its fields or its cause. It follows no redirect
 * (a redirected POST would carry the password or refresh token on) and reads no body past a cap.
 * It backs off on 429 and 503 as Retry-After says, keeps the rate limits the service publishes,
 * and sends credentials the service refused no more until it is given credentials again.
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
  /**
   * The longest wait between attempts. A longer Retry-After is not waited for: the 429 or 503
   * goes to the caller at once (a ParcelApiError with `retryAfterSeconds`, or `fetch`'s
   * Response). The backoff without Retry-After stays under it. Default 30 000 ms.
   */
  readonly maxRetryAfterMs?: number;
  /** The longest answer body `json` reads, in bytes; a longer one rejects unread. Default 1 MiB. */
  readonly maxResponseBytes?: number;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /**
   * The clock, epoch milliseconds: token lifetimes, an HTTP-date Retry-After, whether a wait
   * fits in the call's time limit. Default: Date.now.
   */
  readonly now?: () => number;
  /**
   * Waits `ms` between attempts, rejecting with the signal's reason when it aborts (the client
   * stops waiting then anyway). For tests, which need not really wait. Default: setTimeout.
   */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1) that spreads the waits without Retry-After. For tests. Default: Math.random. */
  readonly random?: () => number;
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
  override readonly name: string = 'ParcelApiError';
  readonly operation: Operation;
  readonly status: number;
  readonly problem: Problem | undefined;
  /** The token endpoint's RFC 6749 error code: `invalid_client`, `invalid_scope`, ... */
  readonly oauthError: string | undefined;
  readonly oauthErrorDescription: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ParcelApiErrorInit, options?: ErrorOptions) {
    super(init.message ?? `${init.operation} failed: ${answerOf(init)}`, options);
    this.operation = init.operation;
    this.status = init.status;
    this.problem = init.problem;
    this.oauthError = init.oauthError;
    this.oauthErrorDescription = init.oauthErrorDescription;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * The service refused the client's credentials: a login answered 401 `invalid-credentials`,
 * or the token endpoint `invalid_client`. The client then sends them no more: each further
 * try would count as another failure, locking the user or client for longer. Every later
 * call that needs them rejects with this at once, without a request, its `cause` the refusal
 * the service answered, until `setCredentials`. Its fields are those of that refusal.
 */
export class CredentialsRefusedError extends ParcelApiError {
  override readonly name: string = 'CredentialsRefusedError';

  /** `refusal` as the service answered it; with `again`, a call stopped because of it. */
  constructor(refusal: ParcelApiError, options: { readonly again?: boolean } = {}) {
    const { operation } = refusal;
    super(
      {
        operation,
        status: refusal.status,
        problem: refusal.problem,
        oauthError: refusal.oauthError,
        oauthErrorDescription: refusal.oauthErrorDescription,
        retryAfterSeconds: refusal.retryAfterSeconds,
        message:
          options.again === true
            ? `${operation} not sent: the credentials were refused (${answerOf(refusal)}); setCredentials to send credentials again`
            : refusal.message,
      },
      options.again === true ? { cause: refusal } : undefined,
    );
  }
}

/** A status and what the service said with it: `401 Invalid credentials`, `401 invalid_client`. */
function answerOf(error: Pick<ParcelApiErrorInit, 'status' | 'problem' | 'oauthError'>): string {
  const said = error.problem?.title ?? error.oauthError;
  return `${error.status}${said === undefined ? '' : ` ${said}`}`;
}

/** A quota the service publishes (RateLimit-Policy): `quota` units per `windowSeconds`. */
export interface RateLimitPolicy {
  readonly name: string;
  readonly quota: number;
  readonly windowSeconds?: number;
}

/** What is left of a policy's quota (RateLimit), whole again in `resetSeconds`. */
export interface RateLimitRemaining {
  readonly name: string;
  readonly remaining: number;
  readonly resetSeconds?: number;
}

/** The rate limits the last answer that published them stated (draft-ietf-httpapi-ratelimit-headers-10). */
export interface RateLimits {
  /** The call that answer was to. */
  readonly operation: Operation;
  /** When the answer came, by the client's clock: `resetSeconds` counts from here. */
  readonly receivedAt: number;
  readonly policies: readonly RateLimitPolicy[];
  readonly remaining: readonly RateLimitRemaining[];
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
/** The backoff of a 429 or 503 without Retry-After: full jitter, [0, 1 s · 2^(retry - 1)). */
const BACKOFF_BASE_MS = 1000;
/** The problem type of a refused login (docs/behaviour.md); a refused refresh has it too. */
const INVALID_CREDENTIALS = 'urn:parcel-auth:problem:invalid-credentials';

export class ParcelClient {
  readonly #base: URL;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #maxRetryAfterMs: number;
  readonly #maxResponseBytes: number;
  #credentials: PasswordCredentials | ClientCredentials;
  /** Counts setCredentials: a token or refusal that answers credentials given before is not kept. */
  #generation = 0;
  /** The service's refusal of #credentials: while it stands they are not sent. */
  #refusal: CredentialsRefusedError | undefined;
  #held: Held | undefined;
  #renewal: Promise<Held> | undefined;
  #rateLimits: RateLimits | undefined;

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
    this.#sleep = options.sleep ?? sleep;
    this.#random = options.random ?? Math.random;
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
    const deadline = this.#now() + timeout;

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
    if (!response.ok) throw await errorOf('request', response, this.#now());
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
    if (!response.ok) throw await errorOf('logout', response, this.#now());
    await discard(response);
  }

  /**
   * Uses `credentials` from now on and forgets the tokens got with the former ones (`logout`
   * first ends their session at the service). After a CredentialsRefusedError this is how the
   * client sends credentials again: new ones, or the same once the account or API client has
   * been put right at the service.
   */
  setCredentials(credentials: PasswordCredentials | ClientCredentials): void {
    this.#credentials = credentials;
    this.#generation++;
    this.#refusal = undefined;
    this.#held = undefined;
    this.#renewal = undefined;
  }

  /** The refusal that keeps the client from sending its credentials, until setCredentials. */
  get credentialsRefusal(): CredentialsRefusedError | undefined {
    return this.#refusal;
  }

  /**
   * The RateLimit-Policy and RateLimit of the last answer that had either (the service sends
   * them on login, refresh and the token endpoint): how close this integration is to a 429.
   * A malformed field counts as absent.
   */
  get rateLimits(): RateLimits | undefined {
    return this.#rateLimits;
  }

  async #accessToken(signal: AbortSignal): Promise<string> {
    const held = this.#held;
    if (this.#renewal === undefined && held !== undefined && this.#now() < held.renewAt) return held.token;
    this.#renewal ??= this.#renew();
    return (await abortable(this.#renewal, signal)).token;
  }

  /** #obtain, shared until it settles; one that setCredentials left behind clears no later one. */
  #renew(): Promise<Held> {
    const renewal: Promise<Held> = this.#obtain().finally(() => {
      if (this.#renewal === renewal) this.#renewal = undefined;
    });
    return renewal;
  }

  /** A 401 to `used`: renew, unless another call renewed since it was sent. */
  #expire(used: string) {
    const held = this.#held;
    if (held?.token === used) this.#held = { ...held, renewAt: Number.NEGATIVE_INFINITY };
  }

  /** Runs once for any number of concurrent callers (#accessToken shares it), with its own time limit. */
  async #obtain(): Promise<Held> {
    const generation = this.#generation;
    const credentials = this.#credentials;
    if (credentials.kind === 'client_credentials') return this.#grant(credentials, generation);
    const refreshToken = this.#held?.refreshToken;
    if (refreshToken !== undefined) {
      try {
        return await this.#refresh(refreshToken, generation);
      } catch (error) {
        // 401 means the session is over (spent, revoked, expired), not that the password is
        // wrong: log in again.
        if (!(error instanceof ParcelApiError && error.status === 401)) throw error;
        if (generation === this.#generation) this.#held = undefined;
      }
    }
    return this.#login(credentials, generation);
  }

  async #login(credentials: PasswordCredentials, generation: number): Promise<Held> {
    this.#stopIfRefused();
    const sentAt = this.#now();
    const route = credentials.loginRoute ?? 'login';
    const body = jsonBody({ username: credentials.username, password: credentials.password });
    const response = await this.#post('login', `/${route}`, body);
    if (!response.ok) throw this.#judge(await errorOf('login', response, this.#now()), generation);
    return this.#keep('login', response, sentAt, generation);
  }

  async #refresh(refreshToken: string, generation: number): Promise<Held> {
    const sentAt = this.#now();
    const response = await this.#post('refresh', '/token/refresh', jsonBody({ refreshToken }));
    if (!response.ok) throw await errorOf('refresh', response, this.#now());
    return this.#keep('refresh', response, sentAt, generation);
  }

  /** Rejects, sending nothing, while the service's refusal of the credentials stands. */
  #stopIfRefused() {
    if (this.#refusal !== undefined) throw new CredentialsRefusedError(this.#refusal, { again: true });
  }

  /**
   * The error of a refused login or token request. A refusal of the credentials is kept, so
   * that they are not sent again, unless setCredentials came while they were on their way.
   */
  #judge(error: ParcelApiError, generation: number): ParcelApiError {
    if (!refusesCredentials(error)) return error;
    const refusal = new CredentialsRefusedError(error);
    if (generation === this.#generation) this.#refusal = refusal;
    return refusal;
  }

  /** A login or refresh answer: the access token and, as refresh tokens rotate, always the newest refresh token. */
  async #keep(
    operation: 'login' | 'refresh',
    response: Response,
    sentAt: number,
    generation: number,
  ): Promise<Held> {
    const body = await readJson(operation, response, MAX_SMALL_ANSWER_BYTES);
    if (!isRecord(body) || typeof body.token !== 'string' || typeof body.refreshToken !== 'string')
      throw new ParcelApiError({
        operation,
        status: response.status,
        message: `${operation}: unexpected answer`,
      });
    const expireAt = typeof body.expireAt === 'string' ? Date.parse(body.expireAt) : Number.NaN;
    const lifetimeMs = lifetimeOf(body.token, sentAt, expireAt);
    const held = { token: body.token, refreshToken: body.refreshToken, renewAt: renewAt(sentAt, lifetimeMs) };
    if (generation === this.#generation) this.#held = held;
    return held;
  }

  async #grant(credentials: ClientCredentials, generation: number): Promise<Held> {
    this.#stopIfRefused();
    const sentAt = this.#now();
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (credentials.scope !== undefined) form.set('scope', credentials.scope.join(' '));
    const basic = btoa(`${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`);
    const response = await this.#post('client-credentials', '/oauth/token', {
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (!response.ok)
      throw this.#judge(await errorOf('client-credentials', response, this.#now()), generation);
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
    const held = { token: body.access_token, refreshToken: undefined, renewAt: renewAt(sentAt, lifetimeMs) };
    if (generation === this.#generation) this.#held = held;
    return held;
  }

  /** A POST to an authentication route, retried on 429 and 503 like any call; under its own time limit unless given one. */
  #post(
    operation: Exclude<Operation, 'request'>,
    path: string,
    init: { headers: Record<string, string>; body: string },
    signal?: AbortSignal,
  ) {
    const limited = withTimeout(signal, this.#timeoutMs);
    const deadline = this.#now() + this.#timeoutMs;
    const url = this.#url(path);
    const send = () => this.#send(operation, url, { method: 'POST', ...init, signal: limited });
    // A refresh that rotated but answered 503, sent again within the stage's grace window
    // (30 s), gets the session's current tokens; later it is reuse, and the 401 that follows
    // makes #obtain log in again, which is what the caller wants anyway.
    return this.#withRetries(send, limited, deadline, true);
  }

  /**
   * Sends again a call answered 429 (nothing was done) or, when `retry503`, 503, up to
   * maxAttempts. A network error is not retried: the request may have been done.
   */
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
      const waitMs = this.#backoff(response, attempt);
      if (waitMs === undefined || this.#now() + waitMs >= deadline) return response;
      await discard(response);
      await abortable(this.#sleep(waitMs, signal), signal);
    }
  }

  /**
   * The wait after the `attempt`th answer: its Retry-After, undefined past maxRetryAfterMs;
   * without one, AWS's "full jitter", a random wait under an exponential ceiling, so that
   * clients refused together do not all come back together.
   */
  #backoff(response: Response, attempt: number): number | undefined {
    const told = retryAfterMs(response.headers.get('retry-after'), this.#now());
    if (told !== undefined) return told > this.#maxRetryAfterMs ? undefined : told;
    const ceiling = Math.min(this.#maxRetryAfterMs, BACKOFF_BASE_MS * 2 ** (attempt - 1));
    return Math.floor(this.#random() * ceiling);
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
    if (target === undefined) {
      this.#observe(operation, response);
      return response;
    }
    await discard(response);
    // The target's origin only: its path or query may carry something.
    throw new ParcelApiError({
      operation,
      status: response.status,
      message: `${operation} refused a redirect: ${response.status} to ${target}`,
    });
  }

  /** Keeps the rate limits an answer publishes, if it has them. */
  #observe(operation: Operation, response: Response) {
    const policies = parseRateLimitPolicy(response.headers.get('ratelimit-policy'));
    const remaining = parseRateLimit(response.headers.get('ratelimit'));
    if (policies === undefined && remaining === undefined) return;
    this.#rateLimits = {
      operation,
      receivedAt: this.#now(),
      policies: policies ?? [],
      remaining: remaining ?? [],
    };
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

/**
 * Retry-After as delta-seconds or an HTTP-date (RFC 9110 section 10.2.3), in milliseconds
 * from `now`; undefined for anything else. Date.parse is not used: it reads "1.5" as a date in
 * 2001 and asctime as local time.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // RFC 9111 section 1.2.2 takes 2^31 for a larger delta-seconds.
  if (/^\d+$/.test(text)) return Math.min(Number.parseInt(text, 10), 2 ** 31) * 1000;
  const date = httpDate(text, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = `(?<month>${MONTHS.join('|')})`;
const TIME = '(?<hour>\\d\\d):(?<minute>\\d\\d):(?<second>\\d\\d)';
/** RFC 9110 section 5.6.7: IMF-fixdate, and the obsolete rfc850-date and asctime-date a recipient still reads. */
const HTTP_DATES = [
  new RegExp(`^${WEEKDAY}, (?<day>\\d\\d) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`),
  new RegExp(
    `^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\\d\\d)-${MONTH}-(?<year>\\d\\d) ${TIME} GMT$`,
  ),
  new RegExp(`^${WEEKDAY} ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`),
];

/** An HTTP-date in epoch milliseconds; a two-digit year is the latest that is not 50 years ahead. */
function httpDate(text: string, now: number): number | undefined {
  const fields = HTTP_DATES.map((form) => form.exec(text)?.groups).find((groups) => groups !== undefined);
  if (fields === undefined) return undefined;
  const day = Number(fields.day);
  const hour = Number(fields.hour);
  const minute = Number(fields.minute);
  const second = Number(fields.second);
  let year = Number(fields.year);
  if (fields.year?.length === 2) {
    year += 2000;
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
  }
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  return Date.UTC(year, MONTHS.indexOf(fields.month ?? ''), day, hour, minute, second);
}

/**
 * Whether the service refused the credentials themselves: a login's `invalid-credentials`, the
 * token endpoint's `invalid_client` (401, or 400 as RFC 6749 section 5.2 allows). Not a 429,
 * a lock or throttle that passes, and not a refused refresh: its session ended, the
 * credentials may log in again.
 */
function refusesCredentials(error: ParcelApiError): boolean {
  if (error.operation === 'login') return error.status === 401 && error.problem?.type === INVALID_CREDENTIALS;
  return (
    error.operation === 'client-credentials' &&
    (error.status === 401 || error.status === 400) &&
    error.oauthError === 'invalid_client'
  );
}

/**
 * RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-10), e.g.
 * `"username";q=5;w=86400, "address";q=100;w=3600`: each policy's quota `q` per window of `w`
 * seconds. Undefined when the field is absent or malformed: a mistake in an advisory field
 * must not fail the call. A member without a whole `q` is skipped, other parameters ignored.
 */
export function parseRateLimitPolicy(value: string | null): RateLimitPolicy[] | undefined {
  return parseList(value)?.flatMap(({ name, parameters }) => {
    const quota = count(parameters.get('q'));
    if (name === undefined || quota === undefined) return [];
    const windowSeconds = count(parameters.get('w'));
    return [{ name, quota, ...(windowSeconds !== undefined && { windowSeconds }) }];
  });
}

/**
 * RateLimit (draft-ietf-httpapi-ratelimit-headers-10), e.g. `"username";r=4;t=172740`: what is
 * left of each policy's quota, `r`, and the seconds until it is whole again, `t`. Read as
 * parseRateLimitPolicy reads its field; a member without a whole `r` is skipped.
 */
export function parseRateLimit(value: string | null): RateLimitRemaining[] | undefined {
  return parseList(value)?.flatMap(({ name, parameters }) => {
    const remaining = count(parameters.get('r'));
    if (name === undefined || remaining === undefined) return [];
    const resetSeconds = count(parameters.get('t'));
    return [{ name, remaining, ...(resetSeconds !== undefined && { resetSeconds }) }];
  });
}

/** A whole number of at least 0 (a -0 made 0), or undefined. */
const count = (value: Bare) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value + 0 : undefined;

/** A member of a Structured Field List: its name if it is a string or token, and its parameters. */
interface ListMember {
  readonly name: string | undefined;
  readonly parameters: ReadonlyMap<string, Bare>;
}
/** A bare item as far as the rate limits need it: a string or token's text, a number, else undefined. */
type Bare = string | number | undefined;

/** Thrown inside FieldReader only, and caught by parseList. */
const MALFORMED = new SyntaxError('malformed structured field');
const SF_NUMBER = /-?\d{1,15}(?:\.\d{1,3})?/y;
const SF_TOKEN = /[A-Za-z*][!#$%&'*+\-.^_`|~\w:/]*/y;
const SF_KEY = /[a-z*][a-z\d_\-.*]*/iy;
const SF_BYTES = /:[A-Za-z\d+/=]*:/y;

/**
 * A Structured Field List (RFC 9651 section 4.2.1), read leniently: whitespace also before
 * `;` and around `=`, keys in any case. One mistake anywhere voids the field, as RFC 9651
 * says; never an exception. Linear in the field's length, whatever it holds.
 */
function parseList(field: string | null): ListMember[] | undefined {
  if (field === null || field.trim() === '') return undefined;
  try {
    return new FieldReader(field).list();
  } catch {
    return undefined;
  }
}

class FieldReader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  list(): ListMember[] {
    const members: ListMember[] = [];
    this.#space();
    for (;;) {
      members.push(this.#member());
      this.#space();
      if (this.#at === this.#text.length) return members;
      this.#take(',');
      this.#space();
    }
  }

  #member(): ListMember {
    if (this.#peek() !== '(') {
      const item = this.#bareItem();
      return { name: typeof item === 'string' ? item : undefined, parameters: this.#parameters() };
    }
    this.#at++;
    for (;;) {
      this.#space();
      if (this.#peek() === ')') break;
      this.#bareItem();
      this.#parameters();
    }
    this.#at++;
    return { name: undefined, parameters: this.#parameters() };
  }

  #parameters(): Map<string, Bare> {
    const parameters = new Map<string, Bare>();
    for (;;) {
      this.#space();
      if (this.#peek() !== ';') return parameters;
      this.#at++;
      this.#space();
      const key = this.#match(SF_KEY).toLowerCase();
      this.#space();
      // A key without a value is the boolean true: no count.
      let value: Bare;
      if (this.#peek() === '=') {
        this.#at++;
        this.#space();
        value = this.#bareItem();
      }
      parameters.set(key, value);
    }
  }

  #bareItem(): Bare {
    const first = this.#peek();
    if (first === '"') return this.#string();
    if (first === '-' || (first >= '0' && first <= '9')) return Number(this.#match(SF_NUMBER));
    if (first === '*' || /^[A-Za-z]$/.test(first)) return this.#match(SF_TOKEN);
    if (first === ':') this.#match(SF_BYTES);
    else if (first === '?') this.#match(/\?[01]/y);
    else if (first === '@') this.#match(/@-?\d{1,15}/y);
    else if (first === '%' && this.#text[this.#at + 1] === '"') {
      this.#at++;
      this.#string();
    } else throw MALFORMED;
    return undefined;
  }

  #string(): string {
    let text = '';
    for (this.#at++; ; ) {
      const char = this.#text[this.#at++];
      if (char === '"') return text;
      if (char === '\\') {
        const escaped = this.#text[this.#at++];
        if (escaped !== '"' && escaped !== '\\') throw MALFORMED;
        text += escaped;
      } else if (char === undefined || char < ' ' || char > '~') throw MALFORMED;
      else text += char;
    }
  }

  #match(pattern: RegExp): string {
    pattern.lastIndex = this.#at;
    const found = pattern.exec(this.#text)?.[0];
    if (found === undefined) throw MALFORMED;
    this.#at += found.length;
    return found;
  }

  #take(char: string) {
    if (this.#peek() !== char) throw MALFORMED;
    this.#at++;
  }

  #space() {
    while (this.#peek() === ' ' || this.#peek() === '\t') this.#at++;
  }

  /** The next character, or '' at the end. */
  #peek(): string {
    return this.#text[this.#at] ?? '';
  }
}

async function errorOf(operation: Operation, response: Response, now: number): Promise<ParcelApiError> {
  const text = await readText(response, MAX_SMALL_ANSWER_BYTES).catch(() => '');
  let body: unknown;
  try {
    body = text === undefined ? undefined : parseJson(text);
  } catch {
    // Not JSON: the status alone says what happened.
  }
  const retryAfter = retryAfterMs(response.headers.get('retry-after'), now);
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
