/** The customer's administrators: the list, Grant, and Revoke (one's own included, which signs out). */
import { call, currentSession } from './api.ts';
import { Cancelled, confirmAction } from './dialogs.ts';
import { byId, el, hiddenText, say } from './dom.ts';
import { onForget, run, showSignIn } from './page.ts';

export async function loadAdministrators() {
  const { administrators } = await call<{ administrators: { username: string }[] }>(
    'GET',
    '/customer/administrators',
  );
  byId('admins-list').replaceChildren(...administrators.map(({ username }) => administratorItem(username)));
}

function administratorItem(username: string) {
  const self = username === currentSession()?.username;
  const revoke = el('button', { type: 'button', class: 'danger' }, 'Revoke', hiddenText(` ${username}`));
  revoke.addEventListener('click', () => run(revoke, () => revokeAdministrator(username)));
  return el('li', {}, el('span', {}, username, self ? ' (you)' : ''), revoke);
}

async function grantAdministrator(input: HTMLInputElement, username: string) {
  await call('POST', '/customer/administrators', { username });
  input.value = '';
  await loadAdministrators();
  say(`${username} is an administrator now: it can use the console from its next sign-in.`);
}

async function revokeAdministrator(username: string) {
  const self = username === currentSession()?.username;
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

export function wireAdminsView() {
  onForget(() => byId('admins-list').replaceChildren());

  byId('grant-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId('grant-username', HTMLInputElement);
    const username = input.value;
    if (username === '') {
      say('Enter the username to grant.', 'error');
      input.focus();
      return;
    }
    void run(event.submitter ?? null, () => grantAdministrator(input, username));
  });
}
