/**
 * The customer's API clients: a card for each with its secrets and its actions, the create form,
 * and what each action asks, sends and then says.
 */
import type { clientView } from '../customer/views.ts';
import { call } from './api.ts';
import { Cancelled, confirmAction, openDialog } from './dialogs.ts';
import { byId, el, hiddenText, say, time } from './dom.ts';
import { focusAfter, onForget, run, takeFocusKey } from './page.ts';
import { type NewSecret, revealSecret } from './secret-panel.ts';

type Client = ReturnType<typeof clientView>;
type Secret = Client['secrets'][number];

/** "Expire the other secrets" of Add secret: seconds, or '' to leave them as they are. */
const EXPIRY_CHOICES = [
  ['3600', 'in 1 hour'],
  ['86400', 'in 1 day'],
  ['604800', 'in 7 days'],
  ['2592000', 'in 30 days'],
  ['', 'never'],
] as const;

export async function loadClients() {
  const { clients } = await call<{ clients: Client[] }>('GET', '/customer/clients');
  const list = byId('clients-list');
  list.replaceChildren(...clients.map(clientCard));
  byId('clients-empty').hidden = clients.length > 0;
  restoreFocus(list);
}

/**
 * After a re-render, the focus goes back to the control that acted (its successor: Enable for
 * Disable), else to its client's heading, else to the list's: never lost to the page's top.
 */
function restoreFocus(list: HTMLElement) {
  const key = takeFocusKey();
  if (key === null) return;
  const clientId = key.split(' ')[0];
  const target =
    [...list.querySelectorAll<HTMLElement>('[data-focus]')].find(
      (element) => element.dataset.focus === key,
    ) ??
    document.getElementById(`client-${clientId}`) ??
    byId('list-title');
  target.focus();
}

const clientLabel = (client: Client) => client.name ?? client.clientId;
const clientPath = (client: Client) => `/customer/clients/${encodeURIComponent(client.clientId)}`;

function clientCard(client: Client) {
  const headingId = `client-${client.clientId}`;
  const statusClass = client.enabled ? 'badge' : 'badge off';
  return el(
    'article',
    { class: 'card client', 'aria-labelledby': headingId },
    el('h3', { id: headingId, tabindex: '-1' }, client.name ?? 'Unnamed client'),
    el(
      'dl',
      { class: 'facts' },
      el('dt', {}, 'Client ID'),
      el('dd', {}, el('code', {}, client.clientId)),
      el('dt', {}, 'Scopes'),
      el('dd', {}, ...client.scopes.flatMap((scope, index) => [index > 0 ? ' ' : '', el('code', {}, scope)])),
      el('dt', {}, 'Status'),
      el('dd', {}, el('span', { class: statusClass }, client.enabled ? 'Enabled' : 'Disabled')),
      el('dt', {}, 'Created'),
      el('dd', {}, time(client.createdAt)),
      el('dt', {}, 'Last used'),
      el('dd', {}, time(client.lastUsedAt, 'never')),
    ),
    secretsTable(client),
    addSecretForm(client),
    clientActions(client),
  );
}

function secretsTable(client: Client) {
  const rows = client.secrets.map((secret) =>
    el(
      'tr',
      {},
      el('td', {}, el('code', {}, secret.secretId)),
      el('td', {}, time(secret.createdAt)),
      el('td', {}, time(secret.expiresAt, 'never')),
      el('td', {}, time(secret.lastUsedAt, 'never')),
      el(
        'td',
        {},
        button(
          'Remove',
          ` secret ${secret.secretId}`,
          `${client.clientId} remove-secret ${secret.secretId}`,
          () => removeSecret(client, secret),
          'danger',
        ),
      ),
    ),
  );
  return el(
    'div',
    { class: 'table-scroll' },
    el(
      'table',
      { class: 'secrets' },
      el('caption', {}, `Secrets of ${clientLabel(client)}`),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['Secret ID', 'Created', 'Expires', 'Last used'].map((name) => el('th', { scope: 'col' }, name)),
          el('th', { scope: 'col' }, hiddenText('Actions')),
        ),
      ),
      el('tbody', {}, ...rows),
    ),
  );
}

/** A button whose accessible name adds `hidden` (which thing it acts on) to its visible text. */
function button(text: string, hidden: string, focusKey: string, onClick: () => Promise<void>, kind?: string) {
  const attributes = { type: 'button', 'data-focus': focusKey, ...(kind !== undefined && { class: kind }) };
  const element = el('button', attributes, text, hiddenText(hidden));
  element.addEventListener('click', () => {
    focusAfter(focusKey);
    return run(element, onClick);
  });
  return element;
}

function addSecretForm(client: Client) {
  const selectId = `expire-${client.clientId}`;
  const select = el(
    'select',
    { id: selectId, name: 'expireOthers' },
    ...EXPIRY_CHOICES.map(([value, text]) => el('option', { value }, text)),
  );
  select.value = '';
  const focusKey = `${client.clientId} add-secret`;
  const submit = el(
    'button',
    { type: 'submit', 'data-focus': focusKey },
    'Add secret',
    hiddenText(` to ${clientLabel(client)}`),
  );
  const form = el(
    'form',
    { class: 'inline', novalidate: '' },
    el('label', { for: selectId }, 'Expire the other secrets'),
    select,
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    focusAfter(focusKey);
    void run(submit, () => addSecret(client, select.value));
  });
  return form;
}

function clientActions(client: Client) {
  const name = ` ${clientLabel(client)}`;
  return el(
    'div',
    { class: 'actions' },
    button('Rename', name, `${client.clientId} rename`, () => renameClient(client)),
    client.enabled
      ? button('Disable', name, `${client.clientId} enabled`, () => setEnabled(client, false))
      : button('Enable', name, `${client.clientId} enabled`, () => setEnabled(client, true)),
    button('Unlock', name, `${client.clientId} unlock`, () => unlockClient(client)),
    button('Remove client', name, `${client.clientId} remove`, () => removeClient(client), 'danger'),
  );
}

async function createClient(form: HTMLFormElement, name: string, scopes: string[]) {
  const created = await call<NewSecret>('POST', '/customer/clients', { name, scopes });
  form.reset();
  await loadClients();
  revealSecret(created);
  say(`Created ${clientLabel(created.client)}. Copy its secret now: it is shown once.`);
}

async function addSecret(client: Client, expireOthers: string) {
  const body = expireOthers === '' ? {} : { expireOthersInSeconds: Number(expireOthers) };
  const added = await call<NewSecret>('POST', `${clientPath(client)}/secrets`, body);
  await loadClients();
  revealSecret(added);
  const others = expireOthers === '' ? '' : ' Its other secrets expire as chosen.';
  say(`Added a secret to ${clientLabel(client)}.${others} Copy it now: it is shown once.`);
}

async function removeSecret(client: Client, secret: Secret) {
  const confirmed = await confirmAction(
    'Remove this secret?',
    `Secret ${secret.secretId} of ${clientLabel(client)} stops working at once: whatever still uses it can no longer get tokens.`,
    'Remove secret',
  );
  if (!confirmed) throw new Cancelled();
  await call('DELETE', `${clientPath(client)}/secrets/${encodeURIComponent(secret.secretId)}`);
  await loadClients();
  say(`Removed secret ${secret.secretId} of ${clientLabel(client)}.`);
}

async function renameClient(client: Client) {
  const input = byId('rename-name', HTMLInputElement);
  input.value = client.name ?? '';
  const choice = await openDialog(byId('rename-dialog', HTMLDialogElement), input);
  const name = input.value;
  if (choice !== 'confirm') throw new Cancelled();
  await call('PATCH', clientPath(client), { name });
  await loadClients();
  say(`Renamed ${clientLabel(client)} to ${name}.`);
}

async function setEnabled(client: Client, enabled: boolean) {
  if (!enabled) {
    const confirmed = await confirmAction(
      'Disable this client?',
      `${clientLabel(client)} gets no more tokens, and the tokens it holds stop working, until it is enabled again.`,
      'Disable client',
    );
    if (!confirmed) throw new Cancelled();
  }
  await call('PATCH', clientPath(client), { enabled });
  await loadClients();
  say(`${enabled ? 'Enabled' : 'Disabled'} ${clientLabel(client)}.`);
}

async function unlockClient(client: Client) {
  await call('POST', `${clientPath(client)}/unlock`);
  say(`Unlocked ${clientLabel(client)}: failed authentications no longer hold it back.`);
}

async function removeClient(client: Client) {
  const confirmed = await confirmAction(
    'Remove this client?',
    `${clientLabel(client)} (${client.clientId}) and all its secrets are removed for good: whatever uses it can no longer get tokens.`,
    'Remove client',
  );
  if (!confirmed) throw new Cancelled();
  await call('DELETE', clientPath(client));
  await loadClients();
  say(`Removed ${clientLabel(client)}.`);
}

export function wireClientsView() {
  onForget(() => byId('clients-list').replaceChildren());

  const form = byId('create-form', HTMLFormElement);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = byId('create-name', HTMLInputElement).value;
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map(
      (input) => input.value,
    );
    if (name.trim() === '') {
      say('Give the client a name.', 'error');
      byId('create-name').focus();
      return;
    }
    if (scopes.length === 0) {
      say('Choose at least one scope.', 'error');
      form.querySelector<HTMLInputElement>('input[name="scope"]')?.focus();
      return;
    }
    void run(event.submitter ?? null, () => createClient(form, name, scopes));
  });
}
