/**
 * Business metrics: what the service counts, as the domain reports it. Login, sessions,
 * throttling and the authorizer take a `MetricsRecorder` (the port) and tell it what
 * happened; they know nothing of how it is published. `lib/metrics/powertools.ts` is the
 * adapter that writes CloudWatch Embedded Metric Format lines with Powertools Metrics.
 *
 * `METRICS` is the one list of metrics and of the values each dimension may take: the event
 * type is derived from it, and the alarms, the dashboard and their template test name
 * metrics from it. Every dimension has a small fixed set of values (a reason, a counter
 * kind): never a username, an address or anything a caller chooses, which would make one
 * CloudWatch metric per value (cost) and put personal data into metric names (privacy).
 */
export const METRICS = {
  /** A login or login-extended that issued tokens. */
  LoginSucceeded: {},
  /** A login refused with 401 (unknown user, wrong password, disabled user) or 429 (locked). */
  LoginFailed: { reason: ['UnknownUser', 'BadPassword', 'Disabled', 'Locked'] },
  /** A failed-login counter reached its limit and was locked. */
  LockoutStarted: { counter: ['Username', 'SourceAddress', 'Client'] },
  /** A password hash below the stage's bcrypt cost was re-hashed at login. */
  PasswordHashUpgraded: {},
  /** A refresh that issued new tokens (a grace-window repeat included). */
  Refresh: {},
  /** A spent refresh token was presented again: its session was revoked. */
  RefreshReuseDetected: {},
  /** A logout with a refresh token of ours (its session ended, or had ended already). */
  Logout: {},
  /** A client credentials grant that issued a token. */
  ClientTokenIssued: {},
  /** A client credentials grant refused with invalid_client (401) or for the throttle (429). */
  ClientAuthFailed: { reason: ['UnknownClient', 'BadSecret', 'Disabled', 'Locked'] },
  /** An authenticated client asked for a scope it does not hold (invalid_scope). */
  ClientTokenRefused: { reason: ['InvalidScope'] },
  /** The authorizer allowed a token. */
  AuthorizerAllow: {},
  /** The authorizer refused a request with 401. */
  AuthorizerDeny: { reason: ['MissingToken', 'SeveralTokens', 'Expired', 'InvalidToken', 'Revoked'] },
  /** The authorizer allowed a token for fewer routes than the one called: API Gateway answered 403. */
  AuthorizerInsufficientScope: {},
  /** The authorizer could not read a user's revocation state and failed closed (503). */
  AuthorizerUnavailable: {},
  /** The revocation check answered from its container cache; with misses, the hit ratio. */
  RevocationCacheHit: {},
  /** The revocation check read the user's state from DynamoDB. */
  RevocationCacheMiss: {},
} as const satisfies Record<string, Readonly<Record<string, readonly string[]>>>;

type Catalogue = typeof METRICS;
export type MetricName = keyof Catalogue;

/** One occurrence of a metric with its dimensions: `{ name: 'LoginFailed', reason: 'Locked' }`. */
export type MetricEvent = {
  [N in MetricName]: { readonly name: N } & {
    readonly [D in keyof Catalogue[N]]: Catalogue[N][D] extends readonly string[]
      ? Catalogue[N][D][number]
      : never;
  };
}[MetricName];

export type LoginFailureReason = Extract<MetricEvent, { name: 'LoginFailed' }>['reason'];
export type ClientAuthFailureReason = Extract<MetricEvent, { name: 'ClientAuthFailed' }>['reason'];
export type AuthorizerDenyReason = Extract<MetricEvent, { name: 'AuthorizerDeny' }>['reason'];

/** The port: the domain reports each event once, as it happens. Never throws. */
export interface MetricsRecorder {
  count(event: MetricEvent): void;
}

/** The dimensions of an event besides the stage's: every key but `name`. */
export function dimensionsOf(event: MetricEvent): Record<string, string> {
  const { name: _name, ...dimensions } = event as { name: string } & Record<string, string>;
  return dimensions;
}
