/** The customer's audit trail, newest first, a page at a time ("Load more" reads older events). */
import type { AuditEventType } from '../audit/audit.ts';
import type { eventView } from '../customer/views.ts';
import { call } from './api.ts';
import { byId, el, say, time } from './dom.ts';
import { onForget, run } from './page.ts';

type AuditEvent = ReturnType<typeof eventView>;

const AUDIT_PAGE = 50;

/** Each of the server's event types (lib/audit/audit.ts) as the page names it: none missing, none extra. */
const EVENT_NAMES = {
  'client.created': 'Client created',
  'client.renamed': 'Client renamed',
  'client.disabled': 'Client disabled',
  'client.enabled': 'Client enabled',
  'client.removed': 'Client removed',
  'client.unlocked': 'Client unlocked',
  'client.secret.added': 'Secret added',
  'client.secret.rolled': 'Secret added, the others expiring',
  'client.secret.expired': 'Secret expired',
  'client.secret.removed': 'Secret removed',
  'client.authentication.failed': 'Authentication failed',
  'user.admin.granted': 'Administrator granted',
  'user.admin.revoked': 'Administrator revoked',
  'connection.approved': 'Platform connected',
  'connection.ended': 'Platform connection ended',
  'passkey.registered': 'Passkey registered',
  'passkey.removed': 'Passkey removed',
  'policy.passkeys.required': 'Passkeys required of administrators',
  'policy.passkeys.optional': 'Passkeys no longer required',
  'policy.dpop.required': 'DPoP required for shipments:write',
  'policy.dpop.optional': 'DPoP no longer required for shipments:write',
  'administration.password.refused': 'Password sign-in refused (passkeys required)',
} as const satisfies Record<AuditEventType, string>;

/** The audit trail's cursor for "Load more", or null at its end. */
let auditNext: string | null = null;

/** An event's name; a type this page does not know yet (a newer server's) as it is. */
const eventName = (type: string) =>
  Object.hasOwn(EVENT_NAMES, type) ? EVENT_NAMES[type as AuditEventType] : type;

export async function loadAudit(more: boolean) {
  const query = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  if (more && auditNext !== null) query.set('next', auditNext);
  const { events, next } = await call<{ events: AuditEvent[]; next: string | null }>(
    'GET',
    `/customer/audit-events?${query}`,
  );
  const rows = events.map(auditRow);
  if (more) byId('audit-rows').append(...rows);
  else byId('audit-rows').replaceChildren(...rows);
  auditNext = next;
  byId('audit-more').hidden = next === null;
  byId('audit-empty').hidden = byId('audit-rows').childElementCount > 0;
}

function auditRow(event: AuditEvent) {
  const details = [
    event.name === undefined ? null : `name: ${event.name}`,
    event.secretId === undefined ? null : `secret ${event.secretId}`,
    event.username === undefined ? null : `user ${event.username}`,
    event.reason === undefined ? null : `reason: ${event.reason}`,
  ].filter((detail) => detail !== null);
  // A roll's: when the client's other secrets stop; an expiry's: when the secret stopped.
  const stops = event.type === 'client.secret.rolled' ? 'the others expire ' : 'expires ';
  const expiry =
    event.secretExpiresAt === undefined
      ? []
      : [details.length > 0 ? `, ${stops}` : stops, time(event.secretExpiresAt)];
  return el(
    'tr',
    {},
    el('td', {}, time(event.at)),
    el('td', {}, eventName(event.type)),
    el('td', {}, event.actor ?? '—'),
    el('td', {}, event.sourceIp ?? '—'),
    el('td', {}, event.clientId === undefined ? '—' : el('code', {}, event.clientId)),
    el('td', {}, details.join(', '), ...expiry),
  );
}

export function wireAuditView() {
  onForget(() => {
    auditNext = null;
    byId('audit-rows').replaceChildren();
  });

  const reload = byId('audit-reload');
  reload.addEventListener('click', () => run(reload, () => loadAudit(false)));
  const more = byId('audit-more');
  more.addEventListener('click', () =>
    run(more, async () => {
      const before = byId('audit-rows').childElementCount;
      await loadAudit(true);
      say(`Loaded ${byId('audit-rows').childElementCount - before} more events.`);
    }),
  );
}
