/**
 * The page's modal dialogs: a confirmation before what cannot be undone, and the password again
 * before what needs a recent login (a secret shown, administration granted or revoked).
 */
import { startAuthentication } from '@simplewebauthn/browser';
import { ApiError, currentSession, OtherUsersPasskey, renewLogin, signInWithPasskey } from './api.ts';
import { ceremonyFailure } from './ceremony.ts';
import { byId, submitterValue } from './dom.ts';

/** The administrator cancelled a dialog: nothing was sent. */
export class Cancelled extends Error {}

/** Opens a modal dialog; resolves with the value of the button that closed it ('' for Escape). */
export function openDialog(dialog: HTMLDialogElement, focus?: HTMLElement): Promise<string> {
  return new Promise((resolve) => {
    dialog.returnValue = '';
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
    focus?.focus();
  });
}

/** True when the administrator confirms; Cancel has the focus, so Enter alone destroys nothing. */
export function confirmAction(title: string, text: string, confirmLabel: string): Promise<boolean> {
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = confirmLabel;
  return openDialog(byId('confirm-dialog', HTMLDialogElement), byId('confirm-cancel')).then(
    (value) => value === 'confirm',
  );
}

/** Logs in again as the same user with the password asked for; Cancelled if it is not given. */
export async function confirmPassword() {
  const password = byId('password-password', HTMLInputElement);
  const error = byId('password-error');
  byId('password-username', HTMLInputElement).value = currentSession()?.username ?? '';
  error.hidden = true;
  for (;;) {
    password.value = '';
    const choice = await openDialog(byId('password-dialog', HTMLDialogElement), password);
    const entered = password.value;
    password.value = '';
    const previous = currentSession();
    if (choice === 'passkey' && previous !== null) {
      const failure = await stepUpWithPasskey(previous.username);
      if (failure === undefined) return;
      error.textContent = failure;
      error.hidden = false;
      continue;
    }
    if (choice !== 'confirm' || previous === null) throw new Cancelled();
    if (entered === '') {
      error.textContent = 'Enter your password.';
      error.hidden = false;
      continue;
    }
    try {
      await renewLogin(previous, entered);
      return;
    } catch (failure) {
      if (!(failure instanceof ApiError && failure.status === 401)) throw failure;
      error.textContent = 'The password is incorrect. Try again.';
      error.hidden = false;
    }
  }
}

/** A passkey's sign-in as `username`, a new session; what went wrong in words, or undefined. */
async function stepUpWithPasskey(username: string): Promise<string | undefined> {
  try {
    await signInWithPasskey(
      (options) =>
        startAuthentication({
          optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
        }),
      username,
    );
    return undefined;
  } catch (failure) {
    if (failure instanceof OtherUsersPasskey) return `That passkey is not ${username}'s.`;
    if (failure instanceof ApiError && failure.status === 401) return 'The passkey was not accepted.';
    const said = ceremonyFailure(failure);
    if (said === undefined) throw failure;
    return said;
  }
}

/**
 * The customer requires passkeys and the session began with a password (RFC 9470's step-up):
 * signs in again with the administrator's passkey; Cancelled if they do not.
 */
export async function confirmPasskey() {
  const error = byId('passkey-step-up-error');
  error.hidden = true;
  for (;;) {
    const choice = await openDialog(byId('passkey-step-up-dialog', HTMLDialogElement));
    const previous = currentSession();
    if (choice !== 'confirm' || previous === null) throw new Cancelled();
    const failure = await stepUpWithPasskey(previous.username);
    if (failure === undefined) return;
    error.textContent = failure;
    error.hidden = false;
  }
}

/** The dialogs' forms close their dialog with the button's value, without a form submission. */
export function wireDialogs() {
  for (const dialog of document.querySelectorAll('dialog')) {
    dialog.querySelector('form')?.addEventListener('submit', (event) => {
      event.preventDefault();
      dialog.close(submitterValue(event));
    });
  }
}
