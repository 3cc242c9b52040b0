/**
 * Every request the client sends: to the API's origin only, following no redirect, sent again
 * after a 429 or 503 as Retry-After says (else after a jittered backoff), keeping the rate
 * limits each answer publishes.
 */
import { discard } from './answers.ts';
import { type Operation, ParcelApiError } from './errors.ts';
import { parseRateLimit, parseRateLimitPolicy, type RateLimits } from './rate-limits.ts';
import { retryAfterMs } from './retry-after.ts';
import { abortable, withTimeout } from './signals.ts';

/** The backoff of a 429 or 503 without Retry-After: full jitter, [0, 1 s · 2^(retry - 1)). */
const BACKOFF_BASE_MS = 1000;

export interface TransportOptions {
  /** The API with its version, checked: https (or http on loopback), no credentials, no trailing `/`. */
  readonly base: URL;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random: () => number;
  /** A call's time limit, its retries and waits included. */
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly maxRetryAfterMs: number;
}

export class Transport {
  readonly #base: URL;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #maxRetryAfterMs: number;
  #rateLimits: RateLimits | undefined;

  constructor(options: TransportOptions) {
    this.#base = options.base;
    this.#fetch = options.fetch;
    this.#now = options.now;
    this.#sleep = options.sleep;
    this.#random = options.random;
    this.#timeoutMs = options.timeoutMs;
    this.#maxAttempts = options.maxAttempts;
    this.#maxRetryAfterMs = options.maxRetryAfterMs;
  }

  /** The RateLimit-Policy and RateLimit of the last answer that had either. */
  get rateLimits(): RateLimits | undefined {
    return this.#rateLimits;
  }

  /** `path` under the API's base URL; a path that would leave its origin throws. */
  url(path: string): URL {
    if (!path.startsWith('/')) throw new TypeError('path must start with "/" and is taken under baseUrl');
    const url = new URL(this.#base.pathname + path, this.#base.origin);
    // The token goes to the API's origin only.
    if (url.origin !== this.#base.origin) throw new TypeError('path leaves the API origin');
    return url;
  }

  /** A POST to an authentication route, retried on 429 and 503 like any call; under its own time limit unless given one. */
  post(
    operation: Exclude<Operation, 'request'>,
    path: string,
    init: { headers: Record<string, string>; body: string },
    signal?: AbortSignal,
  ): Promise<Response> {
    const limited = withTimeout(signal, this.#timeoutMs);
    const deadline = this.#now() + this.#timeoutMs;
    const url = this.url(path);
    const send = () => this.send(operation, url, { method: 'POST', ...init, signal: limited });
    // A refresh that rotated but answered 503, sent again within the stage's grace window
    // (30 s), gets the session's current tokens; later it is reuse, and the 401 that follows
    // makes the session log in again, which is what the caller wants anyway.
    return this.withRetries(send, limited, deadline, true);
  }

  /**
   * Sends again a call answered 429 (nothing was done) or, when `retry503`, 503, up to
   * maxAttempts. A network error is not retried: the request may have been done.
   */
  async withRetries(
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
   * Every request leaves through here, to a URL from `url` (the API's origin). No redirect is
   * followed: a 307 or 308 would resend the login body or refresh token wherever it points,
   * https to plain http included. So any 3xx but 304 is refused, its body unread.
   */
  async send(operation: Operation, url: URL, init: RequestInit): Promise<Response> {
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
