/**
 * The administrators' console in the browser (docs/administrators.md): signs in with the API's
 * login, then manages the customer's API clients, administrators and connected platforms, and reads its audit trail
 * through /api/v1/customer/*, all on this page's own origin. The one script the page loads:
 * esbuild bundles it with the modules it imports into console.js (infra/console-script.ts).
 */

import { startAuthentication } from '@simplewebauthn/browser';
import { loadAdministrators, wireAdminsView } from './admins-view.ts';
import {
  ApiError,
  currentSession,
  logOut,
  onPasskeyRequired,
  onRecentLoginRequired,
  signIn,
  signInWithPasskey,
} from './api.ts';
import { loadAudit, wireAuditView } from './audit-view.ts';
import { ceremonyFailure } from './ceremony.ts';
import { loadClients, wireClientsView } from './clients-view.ts';
import { loadConnections, wireConnectionsView } from './connections-view.ts';
import { confirmPasskey, confirmPassword, wireDialogs } from './dialogs.ts';
import { byId, say } from './dom.ts';
import { forget, run, type Section, showNotAdmin, showSection, showSignIn, showView } from './page.ts';
import { loadPasskeys, wirePasskeysView } from './passkeys-view.ts';
import { wireSecretPanel } from './secret-panel.ts';

async function signInAs(username: string, password: HTMLInputElement) {
  try {
    await signIn(username, password.value);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
    say('The username or password is incorrect.', 'error');
    password.focus();
    return;
  } finally {
    password.value = '';
  }
  await enter(username);
}

async function signInByPasskey() {
  let username: string;
  try {
    username = await signInWithPasskey((options) =>
      startAuthentication({
        optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
      }),
    );
  } catch (error) {
    const failure =
      error instanceof ApiError && error.status === 401
        ? 'The passkey was not accepted.'
        : ceremonyFailure(error);
    if (failure === undefined) throw error;
    say(failure, 'error');
    byId('passkey-sign-in').focus();
    return;
  }
  await enter(username);
}

/** The signed-in user's console: the clients, or why it has none. */
async function enter(username: string) {
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
}

function wireSignIn() {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const username = byId('sign-in-username', HTMLInputElement).value;
    const password = byId('sign-in-password', HTMLInputElement);
    if (username === '' || password.value === '') {
      say('Enter your username and password.', 'error');
      byId(username === '' ? 'sign-in-username' : 'sign-in-password').focus();
      return;
    }
    void run(event.submitter ?? null, () => signInAs(username, password));
  });

  const passkey = byId('passkey-sign-in');
  passkey.addEventListener('click', () => run(passkey, signInByPasskey));

  const signOut = byId('sign-out');
  signOut.addEventListener('click', () =>
    run(signOut, async () => {
      const ended = currentSession();
      forget();
      if (ended !== null) await logOut(ended.refreshToken);
      showSignIn('Signed out.');
    }),
  );
}

/** The tabs: each shows its section and reads it afresh. */
function wireSections() {
  const sections: readonly (readonly [Section, () => Promise<void>])[] = [
    ['clients', loadClients],
    ['connections', loadConnections],
    ['audit', () => loadAudit(false)],
    ['admins', loadAdministrators],
    ['passkeys', loadPasskeys],
  ];
  for (const [section, load] of sections) {
    const tab = byId(`show-${section}`);
    tab.addEventListener('click', () =>
      run(tab, async () => {
        say('');
        showSection(section);
        await load();
      }),
    );
  }
}

onRecentLoginRequired(confirmPassword);
onPasskeyRequired(confirmPasskey);
wireDialogs();
wireSignIn();
wireSecretPanel();
wireClientsView();
wireSections();
wireAuditView();
wireAdminsView();
wireConnectionsView();
wirePasskeysView();

showView('sign-in-view');
byId('sign-in-username').focus();
