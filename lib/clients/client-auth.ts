/**
 * Client authentication at every OAuth endpoint (RFC 6749 section 2.3): the token, revocation
 * and introspection endpoints take the same credentials the same ways and check them with the
 * same work. Every failure (unknown client, wrong secret, disabled client) is the same
 * INVALID_CLIENT after the same work, counted by the login throttle on the client id and the
 * source address like a failed login. A `pcs_` secret of no format we issue (a checksum that
 * fails: secret-format.ts) is the same INVALID_CLIENT before any of it: it cannot be right.
 * A client registered with keys (keys.ts) authenticates with `private_key_jwt` instead (RFC 7523
 * section 2.2): a JWT it signed, single use, whose failures count as a wrong secret's.
 */
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import * as v from 'valibot';
import type { ClientAuthAudit } from '../audit/recorder.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ClientAuthFailureReason, MetricsRecorder } from '../metrics/metrics.ts';
import type { QuotaState } from '../quota.ts';
import type { ReplayStore } from '../replay/replay.ts';
import { beginAlongside, type FailureReason, type LoginThrottle } from '../throttle/throttle.ts';
import { type Clock, systemClock } from '../time.ts';
import { ClientIdSchema, type ClientReader, type ClientRecord, type ClientUseRecorder } from './clients.ts';
import { JWT_BEARER_ASSERTION, MAX_ASSERTION_LENGTH, verifyAssertion } from './keys.ts';
import { secretFormat } from './secret-format.ts';
import { liveKeys, matchExpiredSecret, matchSecret } from './secrets.ts';

/** Longer than any secret we issue (53 characters); bounds the hashing a request can cause. */
const MAX_SECRET_LENGTH = 256;

/** A secret (`client_secret_basic`, `client_secret_post`) or a signed assertion (`private_key_jwt`). */
export type ClientCredentials =
  | { readonly clientId: string; readonly clientSecret: string; readonly assertion?: undefined }
  | { readonly clientId: string; readonly assertion: string; readonly clientSecret?: undefined };

const invalidClient = (quota?: readonly QuotaState[]) =>
  new AppError('INVALID_CLIENT', quota === undefined ? {} : { quota });
const invalidRequest = (detail: string) => new AppError('VALIDATION_FAILED', { detail });

/** Section 2.3.1: id and secret are form-urlencoded before they are joined by a colon and base64-encoded. */
function basicCredentials(value: string): { readonly clientId: string; readonly clientSecret: string } {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(value);
  if (match?.[1] === undefined) throw invalidClient();
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient();
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      throw invalidClient();
    }
  };
  return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
}

/**
 * `client_secret_basic` or `client_secret_post` (section 2.3.1), never both; checked before any
 * read or secret comparison, so malformed credentials cost nothing.
 */
export function clientCredentials(
  form: Record<string, string>,
  authorization: readonly string[],
): ClientCredentials {
  if (authorization.length > 1) throw invalidRequest('Send one Authorization header.');
  if (form.client_assertion !== undefined || form.client_assertion_type !== undefined)
    return assertionCredentials(form, authorization);
  let credentials: { readonly clientId: string; readonly clientSecret: string };
  if (authorization.length === 1) {
    credentials = basicCredentials(authorization[0] ?? '');
    // Section 2.3: one authentication method. A client_id beside Basic must name the same client.
    if (form.client_secret !== undefined)
      throw invalidRequest('Authenticate with HTTP Basic or with client_secret in the body, not both.');
    if (form.client_id !== undefined && form.client_id !== credentials.clientId)
      throw invalidRequest('The client_id in the body is not the one in the Authorization header.');
  } else {
    if (form.client_id === undefined || form.client_secret === undefined) throw invalidClient();
    credentials = { clientId: form.client_id, clientSecret: form.client_secret };
  }
  if (
    !v.is(ClientIdSchema, credentials.clientId) ||
    credentials.clientSecret === '' ||
    credentials.clientSecret.length > MAX_SECRET_LENGTH
  )
    throw invalidClient();
  return credentials;
}

/**
 * `private_key_jwt`: the assertion names its client (`iss`, and `sub`, verified with the key);
 * a `client_id` beside it must name the same. Only its shape is read here, nothing trusted.
 */
function assertionCredentials(
  form: Record<string, string>,
  authorization: readonly string[],
): ClientCredentials {
  if (authorization.length > 0 || form.client_secret !== undefined)
    throw invalidRequest('Authenticate with a client assertion or with a secret, not both.');
  if (form.client_assertion_type !== JWT_BEARER_ASSERTION)
    throw invalidRequest(`The client_assertion_type must be ${JWT_BEARER_ASSERTION}.`);
  const assertion = form.client_assertion;
  if (assertion === undefined || assertion === '' || assertion.length > MAX_ASSERTION_LENGTH)
    throw invalidClient();
  let issuer: unknown;
  try {
    issuer = decodeJwt(assertion).iss;
  } catch {
    throw invalidClient();
  }
  if (!v.is(ClientIdSchema, issuer)) throw invalidClient();
  if (form.client_id !== undefined && form.client_id !== issuer)
    throw invalidRequest('The client_id is not the client the assertion names.');
  return { clientId: issuer, assertion };
}

export interface ClientAuthDeps {
  /** The client's read; the token endpoint's grant also records last use through it (grant.ts). */
  readonly clients: ClientReader & ClientUseRecorder;
  readonly throttle: LoginThrottle;
  readonly logger: Logger;
  /** Counts failed client authentications by reason. */
  readonly metrics: MetricsRecorder;
  readonly clock?: Clock;
  /** Records the failures of clients that exist; never rejects. */
  readonly audit?: ClientAuthAudit;
  /**
   * `private_key_jwt`: the `jti`s spent, and the issuer, the one `aud` an assertion may name.
   * Absent, every assertion is refused (a test of secrets alone).
   */
  readonly assertions?: { readonly replay: ReplayStore; readonly issuer: string };
}

export interface AuthenticatedClient {
  readonly client: ClientRecord;
  /** The live secret presented, or the key that signed the assertion: a token granted now carries it. */
  readonly secretId: string;
  /** When the client was read: a token granted now gets its `iat` from it (`issuedAtFor`). */
  readonly readAt: Date;
  /** What is left of the published limits (the RateLimit field). */
  readonly quota: readonly QuotaState[];
}

const FAILURE_METRIC: Partial<Record<FailureReason, ClientAuthFailureReason>> = {
  'unknown client': 'UnknownClient',
  'bad secret': 'BadSecret',
  'disabled client': 'Disabled',
};

/** The client, enabled and holding the presented secret; otherwise INVALID_CLIENT (TOO_MANY_ATTEMPTS when locked). */
export async function authenticateClient(
  deps: ClientAuthDeps,
  request: ClientCredentials & { readonly sourceIp: string },
): Promise<AuthenticatedClient> {
  const { metrics, logger } = deps;
  // No read and no count: nobody holds such a secret, so it guesses nothing and locks nobody out.
  if (request.clientSecret !== undefined && secretFormat(request.clientSecret) === 'malformed') {
    logger.info('client authentication failed', { reason: 'malformed secret', sourceIp: request.sourceIp });
    metrics.count({ name: 'ClientAuthFailed', reason: 'MalformedSecret' });
    throw invalidClient();
  }
  const attempt = { username: request.clientId, sourceIp: request.sourceIp, client: true } as const;
  const readAt = (deps.clock ?? systemClock)();
  const { reservation, found: client } = await beginAlongside(
    deps.throttle,
    attempt,
    () => deps.clients.findClient(request.clientId),
    () => {
      logger.info('client authentication failed', { reason: 'locked', sourceIp: request.sourceIp });
      metrics.count({ name: 'ClientAuthFailed', reason: 'Locked' });
    },
  );
  const presented =
    request.assertion === undefined
      ? { secretId: matchSecret(request.clientSecret, client?.secrets ?? [], readAt) }
      : await checkAssertion(deps, client, request.assertion, readAt);
  const { secretId } = presented;
  if (client === null || secretId === null || !client.enabled) {
    const reason: FailureReason =
      client === null ? 'unknown client' : secretId === null ? 'bad secret' : 'disabled client';
    // An expired secret is a wrong one to the client and the throttle; the trail and the log
    // name it, for the administrator whose integrator still sends it.
    const expiredId =
      client !== null && secretId === null && request.clientSecret !== undefined
        ? matchExpiredSecret(request.clientSecret, client.secrets, readAt)
        : null;
    const shownReason =
      expiredId !== null
        ? 'expired secret'
        : 'refused' in presented && presented.refused !== undefined && client !== null
          ? presented.refused
          : reason;
    const presentedId =
      secretId ?? expiredId ?? ('replayedWith' in presented ? (presented.replayedWith ?? null) : null);
    // The audit event beside the settle: no step more, and it never changes the answer.
    const [quota] = await Promise.all([
      deps.throttle.failed(attempt, reason, reservation),
      // A customer's trail: a platform, of no customer, has the log and the metric alone.
      client?.customerId !== undefined &&
        deps.audit?.failedAuthentication({
          customerId: client.customerId,
          clientId: client.clientId,
          ...(presentedId !== null && { secretId: presentedId }),
          sourceIp: request.sourceIp,
          reason: shownReason,
        }),
    ]);
    // The client id only of a client that exists: a secret pasted into the id field must not be logged.
    logger.info('client authentication failed', {
      reason: shownReason,
      ...(client !== null && { clientId: client.clientId }),
      sourceIp: request.sourceIp,
    });
    metrics.count({
      name: 'ClientAuthFailed',
      reason:
        request.assertion === undefined || reason !== 'bad secret'
          ? (FAILURE_METRIC[reason] ?? 'UnknownClient')
          : 'replayedWith' in presented && presented.replayedWith !== undefined
            ? 'ReplayedAssertion'
            : 'BadAssertion',
    });
    throw invalidClient(quota);
  }
  const quota = await deps.throttle.succeeded(reservation);
  return { client, secretId, readAt, quota };
}

/**
 * The key of the client's that signed `assertion` for it, its `jti` spent now; or null with why.
 * A client without keys refuses every assertion, as one with keys refuses every secret.
 */
async function checkAssertion(
  deps: ClientAuthDeps,
  client: ClientRecord | null,
  assertion: string,
  now: Date,
): Promise<{ readonly secretId: string | null; readonly refused?: string; readonly replayedWith?: string }> {
  const keys = liveKeys(client?.secrets ?? [], now);
  if (client === null || keys.length === 0 || deps.assertions === undefined)
    return { secretId: null, refused: 'no key registered' };
  const checked = await verifyAssertion(
    assertion,
    keys.map((slot) => slot.key),
    { clientId: client.clientId, issuer: deps.assertions.issuer, now },
  );
  if (!checked.ok) return { secretId: null, refused: checked.reason };
  const { kid, jti, keepUntil } = checked.assertion;
  const keyId = keys.find((slot) => slot.key.kid === kid)?.id ?? null;
  // A replay is a stolen assertion, signed by this key: the trail names it.
  if (!(await deps.assertions.replay.spend(client.clientId, jti, keepUntil, randomUUID())))
    return { secretId: null, refused: 'assertion replayed', ...(keyId !== null && { replayedWith: keyId }) };
  return { secretId: keyId };
}
