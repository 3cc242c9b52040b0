/**
 * The administrator's own passkeys (docs/administrators.md, "Passkeys"): the list, Add (the
 * browser's WebAuthn ceremony, by @simplewebauthn/browser) and Remove.
 */
import { startRegistration, WebAuthnError } from '@simplewebauthn/browser';
import type { passkeyView } from '../customer/passkeys.ts';
import { call } from './api.ts';
import { Cancelled, confirmAction } from './dialogs.ts';
import { byId, el, hiddenText, say, time } from './dom.ts';
import { onForget, run } from './page.ts';

type Passkey = ReturnType<typeof passkeyView>;

export async function loadPasskeys() {
  const { passkeys } = await call<{ passkeys: Passkey[] }>('GET', '/customer/passkeys');
  byId('passkeys-empty').hidden = passkeys.length > 0;
  byId('passkeys-list').replaceChildren(...passkeys.map(passkeyItem));
}

function passkeyItem(passkey: Passkey) {
  const remove = el('button', { type: 'button', class: 'danger' }, 'Remove', hiddenText(` ${passkey.name}`));
  remove.addEventListener('click', () => run(remove, () => removePasskey(passkey)));
  return el(
    'li',
    {},
    el(
      'span',
      {},
      el('strong', {}, passkey.name),
      passkey.synced ? ' (synced)' : '',
      ': added ',
      time(passkey.createdAt),
      ...(passkey.lastUsedAt === null ? [', not used yet'] : [', last used ', time(passkey.lastUsedAt)]),
    ),
    remove,
  );
}

/** The browser's own refusal (the person cancelled, or the authenticator has this passkey) in words. */
export function ceremonyFailure(error: unknown): string | undefined {
  if (error instanceof WebAuthnError) {
    if (error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED')
      return 'This authenticator holds a passkey of yours already.';
    return 'The passkey was not made: the browser or the authenticator refused.';
  }
  if (error instanceof Error && error.name === 'NotAllowedError')
    return 'Cancelled, or the authenticator did not answer in time.';
  return undefined;
}

async function addPasskey(input: HTMLInputElement, name: string) {
  const optionsJSON = await call<Parameters<typeof startRegistration>[0]['optionsJSON']>(
    'POST',
    '/customer/passkeys/options',
  );
  let response: Awaited<ReturnType<typeof startRegistration>>;
  try {
    response = await startRegistration({ optionsJSON });
  } catch (error) {
    const failure = ceremonyFailure(error);
    if (failure === undefined) throw error;
    say(failure, 'error');
    return;
  }
  await call('POST', '/customer/passkeys', { name, response });
  input.value = '';
  await loadPasskeys();
  say(`The passkey ${name} is registered: you can sign in with it.`);
}

async function removePasskey(passkey: Passkey) {
  const confirmed = await confirmAction(
    `Remove the passkey ${passkey.name}?`,
    'You can no longer sign in with it. The authenticator may still list it: remove it there too.',
    'Remove',
  );
  if (!confirmed) throw new Cancelled();
  await call('DELETE', `/customer/passkeys/${encodeURIComponent(passkey.passkeyId)}`);
  await loadPasskeys();
  say(`The passkey ${passkey.name} is removed.`);
  byId('passkeys-title').focus();
}

export function wirePasskeysView() {
  onForget(() => byId('passkeys-list').replaceChildren());
  byId('passkey-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId('passkey-name', HTMLInputElement);
    const name = input.value.trim();
    if (name === '') {
      say('Name the passkey, e.g. "Laptop".', 'error');
      input.focus();
      return;
    }
    void run(event.submitter ?? null, () => addPasskey(input, name));
  });
}
