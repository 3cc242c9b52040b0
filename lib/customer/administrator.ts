/**
 * Who may call the self-service API, and what every change asks of its caller
 * (docs/administrators.md):
 *
 * - The caller is a user whose token holds `customer:admin` (the endpoint checks the scope) and
 *   whose user item still says so, read on every call: an administration an operator ended, a
 *   user disabled or moved to another customer, refuses at once, not at the token's expiry. A
 *   token revoked since API Gateway cached its decision is refused, as the authorizer would now.
 * - The customer is the token's, never the request's.
 * - Where the customer requires passkeys (lib/customer/security-policy.ts), only a session a
 *   passkey began administers; a password's gets RFC 9470's step-up, and the refusal is recorded.
 * - Creating a client or a secret shows a secret, enabling a client brings its secrets back, and
 *   granting administration hands out that power: each needs a login within RECENT_LOGIN_SECONDS
 *   (GitHub's sudo mode), so a stolen session's refreshes alone never mint credentials.
 * - What yields or revives a credential, and a grant of administration, stays within the
 *   administrator's own scopes: a narrowed administrator widens nobody's reach, its own through
 *   another's.
 * - Every change is recorded in the audit trail once made (lib/audit/recorder.ts).
 */
import { type NewAuditEvent, userActor } from '../audit/audit.ts';
import type { AuditRecorder } from '../audit/recorder.ts';
import { AppError, RECENT_LOGIN_SECONDS } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricEvent, MetricsRecorder } from '../metrics/metrics.ts';
import { isUserTokenRevoked } from '../revocation/revocation.ts';
import { ADMIN_SCOPE, type Scope } from '../scopes.ts';
import type { Caller, SignInMethod } from '../tokens/claims.ts';
import type { AdministrationDeps, SecurityPolicies } from './administration.ts';

/** An administrator as every call checks them. */
export interface Administrator {
  readonly username: string;
  readonly customerId: string;
  /** Epoch seconds of the password login the token's session began with; absent in older tokens. */
  readonly authTime: number | undefined;
  /** The token's scopes: a client it creates gets no route scope beyond them. */
  readonly scopes: readonly Scope[];
  /** The caller's address, for the audit trail. */
  readonly sourceIp: string;
  /** How the token's session began: under the customer's passkey policy, a passkey. */
  readonly signInMethod: SignInMethod;
}

const notAdministrator = () => new AppError('INSUFFICIENT_SCOPE', { requiredScope: ADMIN_SCOPE });

/**
 * The caller as an administrator of its token's customer, checked against the user item now.
 * INSUFFICIENT_SCOPE (naming `customer:admin`) for anyone else: a client, a user without a
 * customer, or one whose administration has ended since the token was issued; UNAUTHORIZED for
 * a token revoked since.
 */
export async function administratorOf(
  deps: Pick<AdministrationDeps, 'administrations' | 'policies' | 'recorder' | 'metrics' | 'logger'>,
  caller: Caller,
  sourceIp: string,
): Promise<Administrator> {
  const refuse = (reason: string) => {
    deps.logger.info('administration refused', { reason });
    deps.metrics.count({ name: 'AdministrationRefused', reason: 'NotAdministrator' });
    return notAdministrator();
  };
  if (caller.subject.kind !== 'user' || caller.customerId === null || !caller.scopes.includes(ADMIN_SCOPE))
    throw refuse('not an administrator’s token');
  const { username } = caller.subject;
  const customerId = caller.customerId;
  const stored = await deps.administrations.findAdministration(username);
  if (stored === null || !stored.enabled || !stored.admin || stored.customerId !== caller.customerId)
    throw refuse('administration ended');
  if (isUserTokenRevoked(stored, { issuedAt: caller.issuedAt ?? 0, sessionId: caller.sessionId })) {
    deps.logger.info('administration refused', { reason: 'token revoked' });
    throw new AppError('UNAUTHORIZED');
  }
  const signInMethod = caller.signInMethod ?? 'password';
  // After the user: only an administrator's call reads its customer's policy.
  if (signInMethod !== 'passkey' && (await refusesPasswordSession(deps, { username, customerId, sourceIp })))
    throw new AppError('PASSKEY_REQUIRED');
  return { username, customerId, authTime: caller.authTime, scopes: caller.scopes, sourceIp, signInMethod };
}

/**
 * Whether the customer's policy refuses a user's session that a password began; a refusal is
 * logged, counted and in the customer's trail. The administrators' API and the authorization
 * page ask it alike.
 */
export async function refusesPasswordSession(
  deps: {
    readonly policies: Pick<SecurityPolicies, 'find'>;
    readonly recorder: AuditRecorder;
    readonly logger: Pick<Logger, 'info'>;
    readonly metrics: MetricsRecorder;
  },
  who: { readonly username: string; readonly customerId: string; readonly sourceIp: string },
): Promise<boolean> {
  if (!(await deps.policies.find(who.customerId)).administratorsRequirePasskey) return false;
  const { username, customerId, sourceIp } = who;
  deps.logger.info('administration refused', { reason: 'passkey required', username, sourceIp });
  deps.metrics.count({ name: 'AdministrationRefused', reason: 'PasskeyRequired' });
  await deps.recorder.record({
    customerId,
    type: 'administration.password.refused',
    actor: userActor(username),
    source: 'api',
    ...(sourceIp !== '' && { sourceIp }),
  });
  return true;
}

/** RECENT_LOGIN_REQUIRED unless the token's session began with a login (a password's or a passkey's) RECENT_LOGIN_SECONDS ago or less. */
export function requireRecentLogin(
  deps: Pick<AdministrationDeps, 'clock' | 'metrics'>,
  admin: Administrator,
) {
  const now = deps.clock().getTime() / 1000;
  if (admin.authTime === undefined || now - admin.authTime > RECENT_LOGIN_SECONDS) {
    deps.metrics.count({ name: 'AdministrationRefused', reason: 'RecentLoginRequired' });
    throw new AppError('RECENT_LOGIN_REQUIRED');
  }
}

/**
 * INSUFFICIENT_SCOPE naming the first of `scopes` the administrator's token lacks: an
 * administrator an operator narrowed yields no credential, and makes no administrator, beyond it.
 */
export function requireWithinOwn(
  deps: Pick<AdministrationDeps, 'metrics'>,
  admin: Administrator,
  scopes: readonly Scope[],
) {
  const beyond = scopes.find((scope) => !admin.scopes.includes(scope));
  if (beyond === undefined) return;
  deps.metrics.count({ name: 'AdministrationRefused', reason: 'BeyondOwnScopes' });
  throw new AppError('INSUFFICIENT_SCOPE', {
    requiredScope: beyond,
    detail: `Your own access does not include ${beyond}: an administrator gives only the scopes it holds.`,
  });
}

type EventDetails = Omit<NewAuditEvent, 'customerId' | 'type' | 'actor' | 'source' | 'sourceIp'>;

/** The changes an administrator makes, each an audit event type and a metric's value. */
export type AdministratorChange = Extract<MetricEvent, { name: 'CredentialChanged' }>['type'];

/** The administrator's change made: counted, and its event recorded as theirs, from their address. */
export async function recordChange(
  deps: Pick<AdministrationDeps, 'metrics' | 'recorder'>,
  admin: Administrator,
  type: AdministratorChange,
  details: EventDetails,
) {
  deps.metrics.count({ name: 'CredentialChanged', type });
  await deps.recorder.record({
    customerId: admin.customerId,
    type,
    actor: userActor(admin.username),
    source: 'api',
    ...(admin.sourceIp !== '' && { sourceIp: admin.sourceIp }),
    ...details,
  });
}
