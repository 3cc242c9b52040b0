/**
 * The authorization page (docs/platforms.md, "The page"): the stage's own HTML, one inline
 * stylesheet and one inline script (the passkey sign-in's) allowed by their hashes, and nothing
 * else loaded; the script reaches this origin alone. Every answer forbids
 * framing (clickjacking) and allows a form to post only here, or, on the consent page, to the
 * platform's redirect URI the answer redirects to (CSP `form-action` also governs that redirect).
 */
import { createHash } from 'node:crypto';
import { SCOPES } from '../scopes.ts';
import type { RequestView, Screen } from './authorize.ts';

const STYLE = `
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.5}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}
input[type=text],input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{font-size:1rem;padding:.5rem 1.2rem;margin:1rem .5rem 0 0}
.alert{border-left:4px solid #b00020;padding:.5rem .8rem;background:#fdecee}
ul{padding-left:1.2rem}code{font-size:.9em}`;

/**
 * The passkey sign-in: a challenge from POST /api/v1/passkey-login/options (beside this page's
 * path), navigator.credentials.get with any discoverable passkey of this host, and its answer
 * posted as the page's `passkey` form, as JSON of base64url fields (the WebAuthn Level 3
 * `toJSON` form, built by hand for browsers without it). Without WebAuthn, the button stays hidden.
 */
const SCRIPT = `
(() => {
  const option = document.getElementById('passkey-option');
  const form = document.getElementById('passkey-form');
  const alert = document.getElementById('passkey-alert');
  if (option === null || form === null || alert === null || !window.PublicKeyCredential) return;
  option.hidden = false;
  const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const text = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const button = form.querySelector('button');
  button.addEventListener('click', async () => {
    button.disabled = true;
    alert.hidden = true;
    try {
      const answer = await fetch('../passkey-login/options', { method: 'POST' });
      if (!answer.ok) throw new Error('no challenge');
      const options = await answer.json();
      const credential = await navigator.credentials.get({
        publicKey: {
          challenge: bytes(options.challenge),
          rpId: options.rpId,
          timeout: options.timeout,
          userVerification: options.userVerification,
          allowCredentials: [],
        },
      });
      const signed = credential.response;
      form.elements.response.value = JSON.stringify({
        id: credential.id,
        rawId: text(credential.rawId),
        type: credential.type,
        response: {
          clientDataJSON: text(signed.clientDataJSON),
          authenticatorData: text(signed.authenticatorData),
          signature: text(signed.signature),
          ...(signed.userHandle !== null && { userHandle: text(signed.userHandle) }),
        },
        clientExtensionResults: credential.getClientExtensionResults(),
        ...(credential.authenticatorAttachment !== null && { authenticatorAttachment: credential.authenticatorAttachment }),
      });
      form.submit();
    } catch {
      alert.textContent = 'The passkey sign-in did not finish. Try again, or sign in with your password.';
      alert.hidden = false;
      button.disabled = false;
    }
  });
})();
`;

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const STYLE_HASH = hashOf(STYLE);
const SCRIPT_HASH = hashOf(SCRIPT);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The headers of every answer of the page, the problems included. */
export function pageHeaders(formTarget?: string): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `style-src ${STYLE_HASH}`,
      `script-src ${SCRIPT_HASH}`,
      // The passkey sign-in's challenge, from this origin.
      "connect-src 'self'",
      `form-action 'self'${formTarget === undefined ? '' : ` ${formTarget}`}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    // The page's URL (its request_uri) to none but itself; same-origin, so its forms carry an Origin.
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'Content-Type': 'text/html; charset=utf-8',
  };
}

const page = (title: string, body: string) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>\n`;

const scopeList = (view: RequestView) =>
  `<ul>${view.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code>: ${escapeHtml(SCOPES[scope])}</li>`).join('')}</ul>`;

/** The page's forms post here: the page's own URL without its query. */
const ACTION = 'authorize';

const hidden = (view: RequestView) => `<input type="hidden" name="request" value="${escapeHtml(view.id)}">`;

/** The HTML of a screen that is a page (every one but a redirect). */
export function renderScreen(screen: Exclude<Screen, { page: 'redirect' }>): string {
  switch (screen.page) {
    case 'problem':
      return page(
        'Authorization failed',
        `<h1>Authorization failed</h1><p class="alert" role="alert">${escapeHtml(screen.message)}</p>`,
      );
    case 'sign-in':
      return page(
        `Sign in to connect ${screen.view.platformName}`,
        `<h1>Connect <strong>${escapeHtml(screen.view.platformName)}</strong></h1>` +
          `<p>${escapeHtml(screen.view.platformName)} asks to act for your company with these permissions:</p>${scopeList(screen.view)}` +
          `<p>Sign in as an administrator of your company's account to approve or deny it.</p>` +
          (screen.error === undefined
            ? ''
            : `<p class="alert" role="alert">${escapeHtml(screen.error)}</p>`) +
          `<form method="post" action="${ACTION}">${hidden(screen.view)}<input type="hidden" name="action" value="sign-in">` +
          `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" required>` +
          `<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>` +
          `<button type="submit">Sign in</button></form>` +
          `<div id="passkey-option" hidden><p>Or sign in without a password:</p>` +
          `<form id="passkey-form" method="post" action="${ACTION}">${hidden(screen.view)}<input type="hidden" name="action" value="passkey"><input type="hidden" name="response" value="">` +
          `<button type="button">Sign in with a passkey</button></form>` +
          `<p id="passkey-alert" class="alert" role="alert" hidden></p></div>` +
          `<script>${SCRIPT}</script>`,
      );
    case 'consent':
      return page(
        `Connect ${screen.view.platformName}`,
        `<h1>Connect <strong>${escapeHtml(screen.view.platformName)}</strong> to customer ${escapeHtml(screen.customerId)}?</h1>` +
          `<p>Signed in as ${escapeHtml(screen.username)}. ${escapeHtml(screen.view.platformName)} will be able to:</p>${scopeList(screen.view)}` +
          `<p>The connection belongs to customer ${escapeHtml(screen.customerId)}: any of its administrators can end it in the console.</p>` +
          `<form method="post" action="${ACTION}">${hidden(screen.view)}` +
          `<button type="submit" name="action" value="approve">Approve</button>` +
          `<button type="submit" name="action" value="deny">Deny</button></form>`,
      );
    case 'not-admin':
      return page(
        'An administrator must approve',
        `<h1>An administrator must approve</h1><p class="alert" role="alert">Only an administrator of customer ${escapeHtml(screen.customerId || 'account')} can connect ${escapeHtml(screen.view.platformName)}. Ask one of your company's administrators to start again from the platform and approve it; an administrator may approve only the permissions it holds itself.</p>`,
      );
  }
}
