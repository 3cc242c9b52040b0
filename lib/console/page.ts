/**
 * The page around the views: which view and section shows, what a session leaves behind when it
 * ends, and how an action runs (busy, its failure said in the live region, the focus handed back).
 */
import { ADMIN_SCOPE, ApiError, currentSession, endSession, INSUFFICIENT_SCOPE, SignedOut } from './api.ts';
import { Cancelled } from './dialogs.ts';
import { byId, say } from './dom.ts';

type View = 'sign-in-view' | 'not-admin-view' | 'admin-view';
export type Section = 'clients' | 'connections' | 'audit' | 'admins' | 'passkeys';

const SECTIONS = [
  ['clients', 'clients-view', 'show-clients'],
  ['audit', 'audit-view', 'show-audit'],
  ['admins', 'admins-view', 'show-admins'],
  ['connections', 'connections-view', 'show-connections'],
  ['passkeys', 'passkeys-view', 'show-passkeys'],
] as const satisfies readonly (readonly [Section, string, string])[];

/** What each view holds of a session, forgotten when it ends. */
const forgetters: (() => void)[] = [];
/** The `data-focus` of the control whose action re-renders the clients: it gets the focus back. */
let focusAfterRender: string | null = null;

export function showView(id: View) {
  for (const view of ['sign-in-view', 'not-admin-view', 'admin-view'] as const)
    byId(view).hidden = view !== id;
  byId('account').hidden = id === 'sign-in-view';
}

export function showSection(name: Section) {
  for (const [section, view, button] of SECTIONS) {
    const shown = section === name;
    byId(view).hidden = !shown;
    if (shown) byId(button).setAttribute('aria-current', 'page');
    else byId(button).removeAttribute('aria-current');
  }
}

/** Adds what a view forgets when the session ends (its lists, a shown secret). */
export function onForget(forget: () => void) {
  forgetters.push(forget);
}

/** Forgets everything of the session: tokens, a shown secret, the lists. */
export function forget() {
  endSession();
  for (const forgetView of forgetters) forgetView();
  byId('account-name').textContent = '';
}

export function showSignIn(message: string, kind: 'info' | 'error' = 'info') {
  const username = currentSession()?.username ?? byId('sign-in-username', HTMLInputElement).value;
  forget();
  showView('sign-in-view');
  byId('sign-in-username', HTMLInputElement).value = username;
  say(message, kind);
  byId(username === '' ? 'sign-in-username' : 'sign-in-password').focus();
}

export function showNotAdmin() {
  const username = currentSession()?.username ?? '';
  byId('not-admin-text').textContent =
    `${username} may sign in, but is not an administrator of its customer, so it cannot manage API clients here.`;
  showView('not-admin-view');
  say(`${username} is not an administrator.`, 'error');
  byId('not-admin-title').focus();
}

/** Marks `key` (a control's `data-focus`) as the one that gets the focus after the next re-render. */
export function focusAfter(key: string) {
  focusAfterRender = key;
}

/** The control to focus after a re-render, once: null when no action asked for one. */
export function takeFocusKey(): string | null {
  const key = focusAfterRender;
  focusAfterRender = null;
  return key;
}

/** A 403 for want of administration, not for a scope beyond the administrator's own (said as it is). */
const isNotAdministrator = (error: ApiError) =>
  error.problem?.type === INSUFFICIENT_SCOPE && (error.requiredScope ?? ADMIN_SCOPE) === ADMIN_SCOPE;

/**
 * Runs an action of the page, `button` marked busy meanwhile (aria-disabled, not disabled: it
 * keeps the focus, which a dialog it opens hands back to it); a second press while busy does
 * nothing. What goes wrong is said in the live region; a session that ended shows the sign-in form.
 */
export async function run(button: HTMLElement | null, action: () => Promise<unknown>) {
  if (button?.getAttribute('aria-disabled') === 'true') return;
  button?.setAttribute('aria-disabled', 'true');
  try {
    await action();
  } catch (error) {
    if (error instanceof SignedOut) showSignIn('Your session has ended. Sign in again.', 'error');
    else if (error instanceof Cancelled) say('Cancelled: nothing was changed.');
    else if (error instanceof ApiError && isNotAdministrator(error)) showNotAdmin();
    else if (error instanceof ApiError) say(error.message, 'error');
    else say('The service could not be reached. Check the connection and try again.', 'error');
  } finally {
    focusAfterRender = null;
    button?.removeAttribute('aria-disabled');
  }
}
