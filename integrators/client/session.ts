/**
 * The token the client holds: got by a password login or the client credentials grant, one
 * renewal at a time for any number of callers, renewed before it expires, and never got with
 * credentials the service refused until new ones are given.
 */
import { discard, errorOf, isRecord, MAX_SMALL_ANSWER_BYTES, readJson } from './answers.ts';
import { type AssertionKey, signAssertion } from './assertion.ts';
import { type DpopKeys, signProof } from './dpop.ts';
import { CredentialsRefusedError, ParcelApiError, refusesCredentials } from './errors.ts';
import { lifetimeOf, renewAt, wholeSecondsLifetime } from './lifetime.ts';
import { abortable } from './signals.ts';
import type { Transport } from './transport.ts';

/** A user's username and password: `/login` (or `/login-extended`), then `/token/refresh`. */
export interface PasswordCredentials {
  readonly kind: 'password';
  readonly username: string;
  readonly password: string;
  /** Which login route to call; `login-extended` needs a user linked to a customer. Default `login`. */
  readonly loginRoute?: 'login' | 'login-extended';
}

/**
 * An API client's id and secret, or its private key (a client of keys, `private_key_jwt`): the
 * OAuth 2.0 client credentials grant at `/oauth/token`.
 */
export type ClientCredentials = {
  readonly kind: 'client_credentials';
  readonly clientId: string;
  /** Ask for some of the client's scopes only, e.g. `['tracking:read']`. Default: all of them. */
  readonly scope?: readonly string[];
  /**
   * A key pair to bind the tokens to (DPoP, RFC 9449): each request then carries a proof of it,
   * and a copied token is useless without the private key. Required by a client registered for DPoP.
   */
  readonly dpopKeys?: DpopKeys;
} & (
  | { readonly clientSecret: string; readonly privateKey?: undefined }
  | (Omit<AssertionKey, 'clientId'> & { readonly clientSecret?: undefined })
);

/** The access token the client holds, and when to renew it (this client's clock). */
interface Held {
  readonly token: string;
  readonly refreshToken: string | undefined;
  readonly renewAt: number;
  /** The key a DPoP token is bound to; undefined for a bearer token. */
  readonly dpopKeys?: DpopKeys | undefined;
}

/** What a call sends for its token: `Authorization`, and a DPoP-bound token's proof. */
export interface Authorization {
  readonly token: string;
  readonly headers: Readonly<Record<string, string>>;
}

export class Session {
  readonly #transport: Transport;
  readonly #now: () => number;
  #credentials: PasswordCredentials | ClientCredentials;
  /** Counts setCredentials: a token or refusal that answers credentials given before is not kept. */
  #generation = 0;
  /** The service's refusal of #credentials: while it stands they are not sent. */
  #refusal: CredentialsRefusedError | undefined;
  #held: Held | undefined;
  #renewal: Promise<Held> | undefined;

  constructor(transport: Transport, credentials: PasswordCredentials | ClientCredentials, now: () => number) {
    this.#transport = transport;
    this.#credentials = credentials;
    this.#now = now;
  }

  /** The refusal that keeps the credentials from being sent, until setCredentials. */
  get refusal(): CredentialsRefusedError | undefined {
    return this.#refusal;
  }

  /** The held access token while it is not due for renewal, else a renewed one. */
  async accessToken(signal: AbortSignal): Promise<string> {
    const held = this.#held;
    if (this.#renewal === undefined && held !== undefined && this.#now() < held.renewAt) return held.token;
    this.#renewal ??= this.#renew();
    return (await abortable(this.#renewal, signal)).token;
  }

  /** The headers that send the held (or renewed) token on `method` `url`: a new DPoP proof each call. */
  async authorization(method: string, url: URL, signal: AbortSignal): Promise<Authorization> {
    const token = await this.accessToken(signal);
    const keys = this.#held?.token === token ? this.#held.dpopKeys : undefined;
    if (keys === undefined) return { token, headers: { authorization: `Bearer ${token}` } };
    const proof = await signProof(keys, { method, url, accessToken: token }, this.#now());
    return { token, headers: { authorization: `DPoP ${token}`, dpop: proof } };
  }

  /** A 401 to `used`: renew, unless another call renewed since it was sent. */
  expire(used: string) {
    const held = this.#held;
    if (held?.token === used) this.#held = { ...held, renewAt: Number.NEGATIVE_INFINITY };
  }

  /** Forgets the tokens; with a password login, also ends the session at the service. */
  async logout(signal?: AbortSignal): Promise<void> {
    await this.#renewal?.catch(() => undefined);
    const held = this.#held;
    this.#held = undefined;
    if (held?.refreshToken === undefined) return;
    const response = await this.#transport.post(
      'logout',
      '/logout',
      jsonBody({ refreshToken: held.refreshToken }),
      signal,
    );
    if (!response.ok) throw await errorOf('logout', response, this.#now());
    await discard(response);
  }

  /** Uses `credentials` from now on, forgetting the tokens and the refusal of the former ones. */
  setCredentials(credentials: PasswordCredentials | ClientCredentials): void {
    this.#credentials = credentials;
    this.#generation++;
    this.#refusal = undefined;
    this.#held = undefined;
    this.#renewal = undefined;
  }

  /** #obtain, shared until it settles; one that setCredentials left behind clears no later one. */
  #renew(): Promise<Held> {
    const renewal: Promise<Held> = this.#obtain().finally(() => {
      if (this.#renewal === renewal) this.#renewal = undefined;
    });
    return renewal;
  }

  /** Runs once for any number of concurrent callers (accessToken shares it), with its own time limit. */
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
    const response = await this.#transport.post('login', `/${route}`, body);
    if (!response.ok) throw this.#judge(await errorOf('login', response, this.#now()), generation);
    return this.#keep('login', response, sentAt, generation);
  }

  async #refresh(refreshToken: string, generation: number): Promise<Held> {
    const sentAt = this.#now();
    const response = await this.#transport.post('refresh', '/token/refresh', jsonBody({ refreshToken }));
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
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (credentials.clientSecret !== undefined) {
      const basic = `${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`;
      headers.authorization = `Basic ${btoa(basic)}`;
    } else if (credentials.privateKey !== undefined) {
      // A new assertion for each request: the service spends each one once.
      const key = { ...credentials, privateKey: credentials.privateKey };
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', await signAssertion(key, this.#now()));
    } else throw new TypeError('client credentials need a clientSecret or a privateKey');
    const { dpopKeys } = credentials;
    if (dpopKeys !== undefined)
      headers.dpop = await signProof(
        dpopKeys,
        { method: 'POST', url: this.#transport.url('/oauth/token') },
        this.#now(),
      );
    const response = await this.#transport.post('client-credentials', '/oauth/token', {
      headers,
      body: form.toString(),
    });
    if (!response.ok)
      throw this.#judge(await errorOf('client-credentials', response, this.#now()), generation);
    const body = await readJson('client-credentials', response, MAX_SMALL_ANSWER_BYTES);
    if (
      !isRecord(body) ||
      typeof body.access_token !== 'string' ||
      typeof body.token_type !== 'string' ||
      body.token_type.toLowerCase() !== (dpopKeys === undefined ? 'bearer' : 'dpop')
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
    const held = {
      token: body.access_token,
      refreshToken: undefined,
      renewAt: renewAt(sentAt, lifetimeMs),
      dpopKeys,
    };
    if (generation === this.#generation) this.#held = held;
    return held;
  }
}

const jsonBody = (value: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/** application/x-www-form-urlencoded, as RFC 6749 section 2.3.1 encodes the id and secret before Basic. */
const formEncode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);
