/**
 * The administrator's own passkeys (docs/administrators.md, "Passkeys"): the list, Add (the
 * browser's WebAuthn ceremony, by @simplewebauthn/browser) and Remove.
 */
import { startRegistration } from '@simplewebauthn/browser';
import type { passkeyView } from '../customer/passkeys.ts';
import type { policyView } from '../customer/security-policy.ts';
import { call } from './api.ts';
import { ceremonyFailure } from './ceremony.ts';
import { Cancelled, confirmAction } from './dialogs.ts';
import { byId, el, hiddenText, say, time } from './dom.ts';
import { onForget, run } from './page.ts';

type Passkey = ReturnType<typeof passkeyView>;
type Policy = ReturnType<typeof policyView>;

export async function loadPasskeys() {
  // The switch waits for the policy it shows: a change made before the read would be undone by it.
  const required = byId('policy-require-passkey', HTMLInputElement);
  required.disabled = true;
  const [{ passkeys }, policy] = await Promise.all([
    call<{ passkeys: Passkey[] }>('GET', '/customer/passkeys'),
    call<Policy>('GET', '/customer/security-policy'),
  ]);
  byId('passkeys-empty').hidden = passkeys.length > 0;
  byId('passkeys-list').replaceChildren(...passkeys.map(passkeyItem));
  required.checked = policy.administratorsRequirePasskey;
  required.disabled = false;
}

async function savePolicy(administratorsRequirePasskey: boolean) {
  const saved = await call<Policy>('PUT', '/customer/security-policy', { administratorsRequirePasskey });
  byId('policy-require-passkey', HTMLInputElement).checked = saved.administratorsRequirePasskey;
  say(
    saved.administratorsRequirePasskey
      ? 'Your customer now requires a passkey of every administrator.'
      : 'Your customer no longer requires passkeys.',
  );
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
  byId('policy-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const required = byId('policy-require-passkey', HTMLInputElement).checked;
    void run(event.submitter ?? null, () => savePolicy(required));
  });
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
