import { ADMINISTRATOR_CHANGES } from '../audit/audit.ts';

// The one list of metrics and their dimensions' values (docs/OPERATIONS-DASHBOARD.md, "The service's
// metrics"): never a username or address, which would cost a metric per value and leak personal data.
export const METRICS = {
  LoginSucceeded: {},
  LoginFailed: { reason: ['UnknownUser', 'BadPassword', 'Disabled', 'Locked', 'Passkey'] },
  LockoutStarted: { counter: ['Username', 'Client', 'KnownSource', 'SourceAddress', 'ClientSourceAddress'] },
  /** An attempt a lock refused (by the first counter that refused it). */
  LockRefused: { counter: ['Username', 'Client', 'KnownSource', 'SourceAddress', 'ClientSourceAddress'] },
  /** A success from a known source while its name was locked for the others. */
  LockSpared: { counter: ['Username', 'Client'] },
  PasswordHashUpgraded: {},
  Refresh: {},
  RefreshReuseDetected: {},
  Logout: {},
  ClientTokenIssued: {},
  ClientAuthFailed: {
    reason: [
      'UnknownClient',
      'BadSecret',
      'BadAssertion',
      'ReplayedAssertion',
      'Disabled',
      'Locked',
      'MalformedSecret',
    ],
  },
  ClientTokenRefused: { reason: ['InvalidScope', 'UnauthorizedClient'] },
  ClientTokenRevoked: {},
  /** A platform's tokens of a connection (docs/platforms.md), by the grant that issued them. */
  ConnectionTokenIssued: { grant: ['AuthorizationCode', 'RefreshToken'] },
  /** An administrator's decision on the authorization page. */
  AuthorizationDecided: { decision: ['Approved', 'Denied'] },
  /** A connection ended, by what ended it. */
  ConnectionEnded: { by: ['Customer', 'Platform', 'CodeReplayed', 'RefreshReused'] },
  TokenRevocationRefused: { reason: ['NotIssuedToClient', 'TooManyRevoked'] },
  TokenIntrospected: { result: ['Active', 'Inactive'] },
  TokenIntrospectionRefused: { reason: ['MissingScope'] },
  AuthorizerAllow: {},
  AuthorizerDeny: { reason: ['MissingToken', 'SeveralTokens', 'Expired', 'InvalidToken', 'Revoked'] },
  AuthorizerInsufficientScope: {},
  AuthorizerUnavailable: {},
  RevocationCacheHit: {},
  RevocationCacheMiss: {},
  /** A change an administrator made through the self-service API (its audit event's type). */
  CredentialChanged: { type: ADMINISTRATOR_CHANGES },
  /** A self-service call refused: not (or no longer) an administrator, or a secret without a recent login. */
  AdministrationRefused: {
    reason: ['NotAdministrator', 'RecentLoginRequired', 'BeyondOwnScopes', 'PasskeyRequired'],
  },
  /** An audit event not recorded (its change is made). */
  AuditWriteFailed: {},
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

export function dimensionsOf(event: MetricEvent): Record<string, string> {
  const { name: _name, ...dimensions } = event as { name: string } & Record<string, string>;
  return dimensions;
}
