/**
 * The panel that shows a new secret once, with copy buttons, until the administrator says it is
 * stored; the session's end hides it too.
 */
import type { clientView } from '../customer/views.ts';
import { byId, say } from './dom.ts';
import { onForget } from './page.ts';

/** What creating a client or adding a secret answers: the secret itself, shown this once. */
export interface NewSecret {
  readonly client: ReturnType<typeof clientView>;
  readonly secretId: string;
  readonly clientSecret: string;
}

const FIELDS = ['secret-client-id', 'secret-id', 'secret-value'] as const;
const field = (id: string) => byId(id, HTMLInputElement);

export function revealSecret({ client, secretId, clientSecret }: NewSecret) {
  field('secret-client-id').value = client.clientId;
  field('secret-id').value = secretId;
  field('secret-value').value = clientSecret;
  const panel = byId('secret-panel');
  panel.hidden = false;
  panel.focus();
}

function hideSecret() {
  for (const id of FIELDS) field(id).value = '';
  byId('secret-panel').hidden = true;
}

export function wireSecretPanel() {
  onForget(hideSecret);

  byId('secret-done').addEventListener('click', () => {
    hideSecret();
    say('The secret is no longer shown.');
    byId('create-name').focus();
  });

  for (const copy of document.querySelectorAll<HTMLElement>('[data-copy]')) {
    copy.addEventListener('click', async () => {
      const shown = field(copy.dataset.copy ?? '');
      const what = shown.labels?.[0]?.textContent ?? 'value';
      try {
        await navigator.clipboard.writeText(shown.value);
        say(`Copied the ${what.toLowerCase()} to the clipboard.`);
      } catch {
        shown.focus();
        shown.select();
        say(
          `The browser did not allow copying: the ${what.toLowerCase()} is selected, copy it with Ctrl+C (⌘C).`,
          'error',
        );
      }
    });
  }
}
