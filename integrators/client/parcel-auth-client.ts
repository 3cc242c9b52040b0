/**
 * A client for the parcel carrier's API. It gets an access token (password login or OAuth 2.0
 * client credentials), keeps it, renews it before it expires, and sends it with each call.
 * It needs nothing but the platform's fetch, AbortSignal and setTimeout: copy this folder's
 * .ts files, and import this one. How to use it, and the rules it follows: docs/integrators.md.
 *
 * It never logs. Tokens, the password and the client secret live in private fields only; no
 * error it throws carries them in its message, its fields or its cause. It follows no redirect
 * (a redirected POST would carry the password or refresh token on) and reads no body past a cap.
 * It backs off on 429 and 503 as Retry-After says, keeps the rate limits the service publishes,
 * and sends credentials the service refused no more until it is given credentials again.
 */
import { discard, errorOf, readJson } from './answers.ts';
import type { CredentialsRefusedError } from './errors.ts';
import type { RateLimits } from './rate-limits.ts';
import { type ClientCredentials, type PasswordCredentials, Session } from './session.ts';
import { sleep, withTimeout } from './signals.ts';
import { Transport } from './transport.ts';

export type { DpopKeys } from './dpop.ts';
export {
  CredentialsRefusedError,
  type Operation,
  ParcelApiError,
  type ParcelApiErrorInit,
  type Problem,
} from './errors.ts';
export {
  parseRateLimit,
  parseRateLimitPolicy,
  type RateLimitPolicy,
  type RateLimitRemaining,
  type RateLimits,
} from './rate-limits.ts';
export { retryAfterMs } from './retry-after.ts';
export type { ClientCredentials, PasswordCredentials } from './session.ts';

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

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class ParcelClient {
  readonly #transport: Transport;
  readonly #session: Session;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;

  constructor(options: ParcelClientOptions) {
    const base = new URL(options.baseUrl);
    // The URL is not quoted in these messages: it may carry credentials.
    if (base.username !== '' || base.password !== '')
      throw new TypeError('baseUrl must not contain credentials');
    if (base.protocol !== 'https:' && !(base.protocol === 'http:' && LOOPBACK.has(base.hostname)))
      throw new TypeError('baseUrl must be https (plain http only on 127.0.0.1, localhost or [::1])');
    base.pathname = base.pathname.replace(/\/+$/, '');
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxResponseBytes = byteCount(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES);
    this.#transport = new Transport({
      base,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      now: this.#now,
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
      timeoutMs: this.#timeoutMs,
      maxAttempts: Math.max(1, options.maxAttempts ?? 3),
      maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000,
    });
    this.#session = new Session(this.#transport, options.credentials, this.#now);
  }

  /**
   * Calls `path` (under baseUrl, e.g. `/tracking/12345678901234`) with the access token, as
   * fetch does: any status resolves but a redirect. A 401 renews the token and retries once; a
   * 429 or 503 is retried after its Retry-After, up to maxAttempts. Rejects with a
   * ParcelApiError on a 3xx (but 304) and when no token can be had, and with the signal's
   * reason on abort or timeout. `init.redirect` is ignored: no redirect is ever followed.
   */
  async fetch(path: string, init: ParcelRequestInit = {}): Promise<Response> {
    const url = this.#transport.url(path);
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
      // A DPoP-bound token's proof is new for each sending, a retry's too (the service spends it).
      const authorization = await this.#session.authorization(method, url, signal);
      used = authorization.token;
      for (const [name, value] of Object.entries(authorization.headers)) headers.set(name, value);
      return this.#transport.send('request', url, { ...rest, method, headers, body: body ?? null, signal });
    };
    const retry503 = idempotent ?? IDEMPOTENT.has(method);
    const first = await this.#transport.withRetries(send, signal, deadline, retry503);
    if (first.status !== 401) return first;
    await discard(first);
    this.#session.expire(used);
    return this.#transport.withRetries(send, signal, deadline, retry503);
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
    return this.#session.accessToken(withTimeout(signal, this.#timeoutMs));
  }

  /** Forgets the tokens; with a password login, also ends the session at the service. */
  logout(signal?: AbortSignal): Promise<void> {
    return this.#session.logout(signal);
  }

  /**
   * Uses `credentials` from now on and forgets the tokens got with the former ones (`logout`
   * first ends their session at the service). After a CredentialsRefusedError this is how the
   * client sends credentials again: new ones, or the same once the account or API client has
   * been put right at the service.
   */
  setCredentials(credentials: PasswordCredentials | ClientCredentials): void {
    this.#session.setCredentials(credentials);
  }

  /** The refusal that keeps the client from sending its credentials, until setCredentials. */
  get credentialsRefusal(): CredentialsRefusedError | undefined {
    return this.#session.refusal;
  }

  /**
   * The RateLimit-Policy and RateLimit of the last answer that had either (the service sends
   * them on login, refresh and the token endpoint): how close this integration is to a 429.
   * A malformed field counts as absent.
   */
  get rateLimits(): RateLimits | undefined {
    return this.#transport.rateLimits;
  }
}

/** A byte cap given as an option: a whole number, or the default when not given. */
function byteCount(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new TypeError('maxResponseBytes must be a whole number of bytes');
  return value;
}
