/**
 * The administrators' console in the browser (docs/administrators.md): signs in with the API's
 * login, then manages the customer's API clients and administrators and reads its audit trail
 * through /api/v1/customer/*, all on this page's own origin.
 *
 * The tokens live in this module's variables only, never in storage or a cookie: a page
 * reload or a closed tab forgets them, and no other script (the CSP allows none) can read them.
 * Every element is built with the DOM, never from HTML text, so nothing the API returns is markup.
 */

/** The API beside this page: /console → /api/v1, /dev/console → /dev/api/v1 (a stage's path). */
const API = `${location.pathname.replace(/\/console\/?$/, '')}/api/v1`;
const PROBLEM = 'urn:parcel-auth:problem:';
const RECENT_LOGIN_REQUIRED = `${PROBLEM}recent-login-required`;
const INSUFFICIENT_SCOPE = `${PROBLEM}insufficient-scope`;
const AUDIT_PAGE = 50;

/** "Expire the other secrets" of Add secret: seconds, or '' to leave them as they are. */
const EXPIRY_CHOICES = [
  ['3600', 'in 1 hour'],
  ['86400', 'in 1 day'],
  ['604800', 'in 7 days'],
  ['2592000', 'in 30 days'],
  ['', 'never'],
];

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
};

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The signed-in administrator: `{ username, accessToken, refreshToken }`, or null. */
let session = null;
/** The audit trail's cursor for "Load more", or null at its end. */
let auditNext = null;
/** The `data-focus` of the control whose action re-renders the clients: it gets the focus back. */
let focusAfterRender = null;

/** An answer of the API that is not a success, with its problem+json body if it has one. */
class ApiError extends Error {
  constructor(answer) {
    super(problemText(answer));
    this.status = answer.status;
    this.problem = answer.json;
  }
}
/** The session is over (the refresh token was refused): sign in again. */
class SignedOut extends Error {}
/** The administrator cancelled a dialog: nothing was sent. */
class Cancelled extends Error {}

function byId(id) {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found;
}

/** An element with attributes and children (strings become text, never markup). */
function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

const hiddenText = (text) => el('span', { class: 'visually-hidden' }, text);

/** A date in the reader's locale and time zone, the exact ISO time in its title. */
function time(iso, missing = '—') {
  if (typeof iso !== 'string') return document.createTextNode(missing);
  const date = new Date(iso);
  return el(
    'time',
    { datetime: iso, title: iso },
    Number.isNaN(date.getTime()) ? iso : DATE_FORMAT.format(date),
  );
}

function problemText({ status, json: problem, retryAfter }) {
  // The page reads Retry-After for the reader: the problem's detail can only point at it.
  if (status === 429 && retryAfter !== null) return `Too many attempts. Try again in ${retryAfter} seconds.`;
  const text =
    typeof problem?.detail === 'string'
      ? problem.detail
      : typeof problem?.title === 'string'
        ? problem.title
        : `The service answered ${status}.`;
  const params = Array.isArray(problem?.invalidParams)
    ? problem.invalidParams.map((param) => `${param.name} ${param.reason}`).join('; ')
    : '';
  return params === '' ? text : `${text} (${params})`;
}

/** Says `message` in the live region; `kind` 'error' shows it as one. */
function say(message, kind = 'info') {
  const status = byId('status');
  status.textContent = message;
  status.dataset.kind = kind;
}

// --- The API ---------------------------------------------------------------------------------

async function send(method, path, body, accessToken) {
  const headers = { Accept: 'application/json, application/problem+json' };
  if (accessToken !== undefined) headers.Authorization = `Bearer ${accessToken}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await response.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, ok: response.ok, json, retryAfter: response.headers.get('Retry-After') };
}

async function logIn(username, password) {
  const answer = await send('POST', '/login', { username, password });
  if (!answer.ok) throw new ApiError(answer);
  return { username, accessToken: answer.json.token, refreshToken: answer.json.refreshToken };
}

/** Ends a session at the API; a failure changes nothing here (its tokens are forgotten anyway). */
function logOut(refreshToken) {
  return send('POST', '/logout', { refreshToken }).catch(() => undefined);
}

let refreshing = null;
/** One refresh at a time; false when the refresh token is refused (the session is over). */
function refreshSession() {
  if (refreshing === null) {
    const current = session;
    refreshing = (async () => {
      if (current === null) return false;
      const answer = await send('POST', '/token/refresh', { refreshToken: current.refreshToken });
      if (answer.status === 401 || answer.status === 400) return false;
      if (!answer.ok) throw new ApiError(answer);
      if (session === current)
        session = { ...current, accessToken: answer.json.token, refreshToken: answer.json.refreshToken };
      return true;
    })().finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

/**
 * Calls the API as the administrator. A 401 gets one refresh and a retry; a refused refresh
 * ends the session (SignedOut). An action that shows a secret needs a recent login: on that 403
 * the administrator confirms the password, and the action is retried once with the new tokens.
 */
async function call(method, path, body) {
  if (session === null) throw new SignedOut();
  let answer = await send(method, path, body, session.accessToken);
  if (answer.status === 401) {
    if (!(await refreshSession()) || session === null) throw new SignedOut();
    answer = await send(method, path, body, session.accessToken);
    if (answer.status === 401) throw new SignedOut();
  }
  if (answer.status === 403 && answer.json?.type === RECENT_LOGIN_REQUIRED) {
    await confirmPassword();
    answer = await send(method, path, body, session.accessToken);
  }
  if (!answer.ok) throw new ApiError(answer);
  return answer.json;
}

// --- Dialogs ---------------------------------------------------------------------------------

/** Opens a modal dialog; resolves with the value of the button that closed it ('' for Escape). */
function openDialog(dialog, focus) {
  return new Promise((resolve) => {
    dialog.returnValue = '';
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
    focus?.focus();
  });
}

/** True when the administrator confirms; Cancel has the focus, so Enter alone destroys nothing. */
function confirmAction(title, text, confirmLabel) {
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = confirmLabel;
  return openDialog(byId('confirm-dialog'), byId('confirm-cancel')).then((value) => value === 'confirm');
}

/** Logs in again as the same user with the password asked for; Cancelled if it is not given. */
async function confirmPassword() {
  const password = byId('password-password');
  const error = byId('password-error');
  byId('password-username').value = session.username;
  error.hidden = true;
  for (;;) {
    password.value = '';
    const choice = await openDialog(byId('password-dialog'), password);
    const entered = password.value;
    password.value = '';
    if (choice !== 'confirm' || session === null) throw new Cancelled();
    if (entered === '') {
      error.textContent = 'Enter your password.';
      error.hidden = false;
      continue;
    }
    try {
      const previous = session;
      session = await logIn(previous.username, entered);
      void logOut(previous.refreshToken);
      return;
    } catch (failure) {
      if (!(failure instanceof ApiError && failure.status === 401)) throw failure;
      error.textContent = 'The password is incorrect. Try again.';
      error.hidden = false;
    }
  }
}

// The dialogs' forms close their dialog with the button's value, without a form submission.
for (const dialog of document.querySelectorAll('dialog')) {
  dialog.querySelector('form')?.addEventListener('submit', (event) => {
    event.preventDefault();
    dialog.close(event.submitter?.value ?? '');
  });
}

// --- Views -----------------------------------------------------------------------------------

function showView(id) {
  for (const view of ['sign-in-view', 'not-admin-view', 'admin-view']) byId(view).hidden = view !== id;
  byId('account').hidden = id === 'sign-in-view';
}

function showSection(name) {
  for (const [section, button] of [
    ['clients-view', 'show-clients'],
    ['audit-view', 'show-audit'],
    ['admins-view', 'show-admins'],
  ]) {
    const shown = section === `${name}-view`;
    byId(section).hidden = !shown;
    if (shown) byId(button).setAttribute('aria-current', 'page');
    else byId(button).removeAttribute('aria-current');
  }
}

/** Forgets everything of the session: tokens, a shown secret, the lists. */
function forget() {
  session = null;
  auditNext = null;
  hideSecret();
  byId('clients-list').replaceChildren();
  byId('audit-rows').replaceChildren();
  byId('admins-list').replaceChildren();
  byId('account-name').textContent = '';
}

function showSignIn(message, kind = 'info') {
  const username = session?.username ?? byId('sign-in-username').value;
  forget();
  showView('sign-in-view');
  byId('sign-in-username').value = username;
  say(message, kind);
  byId(username === '' ? 'sign-in-username' : 'sign-in-password').focus();
}

/**
 * Runs an action of the page, `button` marked busy meanwhile (aria-disabled, not disabled: it
 * keeps the focus, which a dialog it opens hands back to it); a second press while busy does
 * nothing. What goes wrong is said in the live region; a session that ended shows the sign-in form.
 */
async function run(button, action) {
  if (button?.getAttribute('aria-disabled') === 'true') return;
  button?.setAttribute('aria-disabled', 'true');
  try {
    await action();
  } catch (error) {
    if (error instanceof SignedOut) showSignIn('Your session has ended. Sign in again.', 'error');
    else if (error instanceof Cancelled) say('Cancelled: nothing was changed.');
    else if (error instanceof ApiError && error.problem?.type === INSUFFICIENT_SCOPE) showNotAdmin();
    else if (error instanceof ApiError) say(error.message, 'error');
    else say('The service could not be reached. Check the connection and try again.', 'error');
  } finally {
    focusAfterRender = null;
    button?.removeAttribute('aria-disabled');
  }
}

function showNotAdmin() {
  const username = session?.username ?? '';
  byId('not-admin-text').textContent =
    `${username} may sign in, but is not an administrator of its customer, so it cannot manage API clients here.`;
  showView('not-admin-view');
  say(`${username} is not an administrator.`, 'error');
  byId('not-admin-title').focus();
}

// --- Sign in and out -------------------------------------------------------------------------

byId('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const username = byId('sign-in-username').value;
  const password = byId('sign-in-password');
  if (username === '' || password.value === '') {
    say('Enter your username and password.', 'error');
    byId(username === '' ? 'sign-in-username' : 'sign-in-password').focus();
    return;
  }
  void run(event.submitter ?? null, async () => {
    try {
      session = await logIn(username, password.value);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) throw error;
      say('The username or password is incorrect.', 'error');
      password.focus();
      return;
    } finally {
      password.value = '';
    }
    byId('account-name').textContent = username;
    try {
      await loadClients();
    } catch (error) {
      // Signed in, but not as an administrator (or as a user without a customer).
      if (!(error instanceof ApiError && error.status === 403)) throw error;
      showNotAdmin();
      return;
    }
    showView('admin-view');
    showSection('clients');
    say(`Signed in as ${username}.`);
    byId('clients-title').focus();
  });
});

byId('sign-out').addEventListener('click', (event) =>
  run(event.currentTarget, async () => {
    const ended = session;
    forget();
    if (ended !== null) await logOut(ended.refreshToken);
    showSignIn('Signed out.');
  }),
);

// --- API clients -----------------------------------------------------------------------------

async function loadClients() {
  const { clients } = await call('GET', '/customer/clients');
  const list = byId('clients-list');
  list.replaceChildren(...clients.map(clientCard));
  byId('clients-empty').hidden = clients.length > 0;
  restoreFocus(list);
}

/**
 * After a re-render, the focus goes back to the control that acted (its successor: Enable for
 * Disable), else to its client's heading, else to the list's: never lost to the page's top.
 */
function restoreFocus(list) {
  if (focusAfterRender === null) return;
  const key = focusAfterRender;
  focusAfterRender = null;
  const clientId = key.split(' ')[0];
  const target =
    [...list.querySelectorAll('[data-focus]')].find((element) => element.dataset.focus === key) ??
    document.getElementById(`client-${clientId}`) ??
    byId('list-title');
  target.focus();
}

const clientLabel = (client) => client.name ?? client.clientId;

function clientCard(client) {
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

function secretsTable(client) {
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
function button(text, hidden, focusKey, onClick, kind) {
  const attributes = { type: 'button', 'data-focus': focusKey, ...(kind && { class: kind }) };
  const element = el('button', attributes, text, hiddenText(hidden));
  element.addEventListener('click', () => {
    focusAfterRender = focusKey;
    return run(element, onClick);
  });
  return element;
}

function addSecretForm(client) {
  const selectId = `expire-${client.clientId}`;
  const select = el(
    'select',
    { id: selectId, name: 'expireOthers' },
    ...EXPIRY_CHOICES.map(([value, text]) => el('option', { value }, text)),
  );
  select.value = '';
  const submit = el(
    'button',
    { type: 'submit', 'data-focus': `${client.clientId} add-secret` },
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
    focusAfterRender = submit.dataset.focus;
    void run(submit, () => addSecret(client, select.value));
  });
  return form;
}

function clientActions(client) {
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

const clientPath = (client) => `/customer/clients/${encodeURIComponent(client.clientId)}`;

/** Shows a new secret once, with copy buttons, until the administrator says it is stored. */
function revealSecret({ client, secretId, clientSecret }) {
  byId('secret-client-id').value = client.clientId;
  byId('secret-id').value = secretId;
  byId('secret-value').value = clientSecret;
  const panel = byId('secret-panel');
  panel.hidden = false;
  panel.focus();
}

function hideSecret() {
  for (const id of ['secret-client-id', 'secret-id', 'secret-value']) byId(id).value = '';
  byId('secret-panel').hidden = true;
}

byId('secret-done').addEventListener('click', () => {
  hideSecret();
  say('The secret is no longer shown.');
  byId('create-name').focus();
});

for (const copy of document.querySelectorAll('[data-copy]')) {
  copy.addEventListener('click', async () => {
    const field = byId(copy.dataset.copy);
    const what = field.labels?.[0]?.textContent ?? 'value';
    try {
      await navigator.clipboard.writeText(field.value);
      say(`Copied the ${what.toLowerCase()} to the clipboard.`);
    } catch {
      field.focus();
      field.select();
      say(
        `The browser did not allow copying: the ${what.toLowerCase()} is selected, copy it with Ctrl+C (⌘C).`,
        'error',
      );
    }
  });
}

byId('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const name = byId('create-name').value;
  const scopes = [...form.querySelectorAll('input[name="scope"]:checked')].map((input) => input.value);
  if (name.trim() === '') {
    say('Give the client a name.', 'error');
    byId('create-name').focus();
    return;
  }
  if (scopes.length === 0) {
    say('Choose at least one scope.', 'error');
    form.querySelector('input[name="scope"]')?.focus();
    return;
  }
  void run(event.submitter ?? null, async () => {
    const created = await call('POST', '/customer/clients', { name, scopes });
    form.reset();
    await loadClients();
    revealSecret(created);
    say(`Created ${clientLabel(created.client)}. Copy its secret now: it is shown once.`);
  });
});

async function addSecret(client, expireOthers) {
  const body = expireOthers === '' ? {} : { expireOthersInSeconds: Number(expireOthers) };
  const added = await call('POST', `${clientPath(client)}/secrets`, body);
  await loadClients();
  revealSecret(added);
  const others = expireOthers === '' ? '' : ' Its other secrets expire as chosen.';
  say(`Added a secret to ${clientLabel(client)}.${others} Copy it now: it is shown once.`);
}

async function removeSecret(client, secret) {
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

async function renameClient(client) {
  const input = byId('rename-name');
  input.value = client.name ?? '';
  const choice = await openDialog(byId('rename-dialog'), input);
  const name = input.value;
  if (choice !== 'confirm') throw new Cancelled();
  await call('PATCH', clientPath(client), { name });
  await loadClients();
  say(`Renamed ${clientLabel(client)} to ${name}.`);
}

async function setEnabled(client, enabled) {
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

async function unlockClient(client) {
  await call('POST', `${clientPath(client)}/unlock`);
  say(`Unlocked ${clientLabel(client)}: failed authentications no longer hold it back.`);
}

async function removeClient(client) {
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

// --- The audit trail -------------------------------------------------------------------------

async function loadAudit(more) {
  const query = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  if (more && auditNext !== null) query.set('next', auditNext);
  const { events, next } = await call('GET', `/customer/audit-events?${query}`);
  const rows = events.map(auditRow);
  if (more) byId('audit-rows').append(...rows);
  else byId('audit-rows').replaceChildren(...rows);
  auditNext = next;
  byId('audit-more').hidden = next === null;
  byId('audit-empty').hidden = byId('audit-rows').childElementCount > 0;
}

function auditRow(event) {
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
    el('td', {}, EVENT_NAMES[event.type] ?? event.type),
    el('td', {}, event.actor ?? '—'),
    el('td', {}, event.sourceIp ?? '—'),
    el('td', {}, event.clientId === undefined ? '—' : el('code', {}, event.clientId)),
    el('td', {}, details.join(', '), ...expiry),
  );
}

byId('show-clients').addEventListener('click', (event) =>
  run(event.currentTarget, async () => {
    say('');
    showSection('clients');
    await loadClients();
  }),
);
byId('show-audit').addEventListener('click', (event) =>
  run(event.currentTarget, async () => {
    say('');
    showSection('audit');
    await loadAudit(false);
  }),
);
byId('show-admins').addEventListener('click', (event) =>
  run(event.currentTarget, async () => {
    say('');
    showSection('admins');
    await loadAdministrators();
  }),
);
byId('audit-reload').addEventListener('click', (event) => run(event.currentTarget, () => loadAudit(false)));
byId('audit-more').addEventListener('click', (event) =>
  run(event.currentTarget, async () => {
    const before = byId('audit-rows').childElementCount;
    await loadAudit(true);
    say(`Loaded ${byId('audit-rows').childElementCount - before} more events.`);
  }),
);

// --- Administrators --------------------------------------------------------------------------

async function loadAdministrators() {
  const { administrators } = await call('GET', '/customer/administrators');
  byId('admins-list').replaceChildren(...administrators.map(({ username }) => administratorItem(username)));
}

function administratorItem(username) {
  const self = username === session?.username;
  const revoke = el('button', { type: 'button', class: 'danger' }, 'Revoke', hiddenText(` ${username}`));
  revoke.addEventListener('click', () => run(revoke, () => revokeAdministrator(username)));
  return el('li', {}, el('span', {}, username, self ? ' (you)' : ''), revoke);
}

byId('grant-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = byId('grant-username');
  const username = input.value;
  if (username === '') {
    say('Enter the username to grant.', 'error');
    input.focus();
    return;
  }
  void run(event.submitter ?? null, async () => {
    await call('POST', '/customer/administrators', { username });
    input.value = '';
    await loadAdministrators();
    say(`${username} is an administrator now: it can use the console from its next sign-in.`);
  });
});

async function revokeAdministrator(username) {
  const self = username === session?.username;
  const confirmed = await confirmAction(
    'Revoke administration?',
    self
      ? 'You can no longer use this console, and your session ends at once.'
      : `${username} can no longer use this console, and its sessions end at once.`,
    'Revoke',
  );
  if (!confirmed) throw new Cancelled();
  await call('POST', '/customer/administrators/revoke', { username });
  if (self) {
    showSignIn('You are no longer an administrator: your session has ended.');
    return;
  }
  await loadAdministrators();
  say(`${username} is no longer an administrator.`);
  byId('admins-list-title').focus();
}

showView('sign-in-view');
byId('sign-in-username').focus();
