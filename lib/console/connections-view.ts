/** The platforms the customer approved (docs/platforms.md, "Connections"): the list, and End. */
import type { connectionView } from '../customer/views.ts';
import { call } from './api.ts';
import { Cancelled, confirmAction } from './dialogs.ts';
import { byId, el, hiddenText, say, time } from './dom.ts';
import { onForget, run } from './page.ts';

type Connection = ReturnType<typeof connectionView>;

export async function loadConnections() {
  const { connections } = await call<{ connections: Connection[] }>('GET', '/customer/connections');
  byId('connections-empty').hidden = connections.length > 0;
  byId('connections-list').replaceChildren(...connections.map(connectionItem));
}

function connectionItem(connection: Connection) {
  const end = el('button', { type: 'button', class: 'danger' }, 'End', hiddenText(` ${connection.name}`));
  end.addEventListener('click', () => run(end, () => endConnection(connection)));
  const used =
    connection.lastUsedAt === null ? [', not used yet'] : [', last used ', time(connection.lastUsedAt)];
  return el(
    'li',
    {},
    el(
      'span',
      {},
      el('strong', {}, connection.name),
      ` (${connection.scopes.join(', ')}): approved by ${connection.approvedBy} `,
      time(connection.approvedAt),
      ...used,
    ),
    end,
  );
}

async function endConnection(connection: Connection) {
  const confirmed = await confirmAction(
    `End the connection to ${connection.name}?`,
    `${connection.name} can no longer act for the customer: its tokens stop at once.`,
    'End',
  );
  if (!confirmed) throw new Cancelled();
  await call('DELETE', `/customer/connections/${encodeURIComponent(connection.connectionId)}`);
  await loadConnections();
  say(`The connection to ${connection.name} has ended.`);
  byId('connections-title').focus();
}

export function wireConnectionsView() {
  onForget(() => byId('connections-list').replaceChildren());
}
