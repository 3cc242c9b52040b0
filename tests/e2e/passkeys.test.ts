/**
 * Passkeys in the console (docs/administrators.md, "Passkeys"), as an administrator uses them in
 * Debian's Chromium, driven by playwright-core, against the local stack at
 * http://localhost:<port>/console (WebAuthn takes no IP address for a relying party). The
 * authenticator is Chromium's own virtual one (the DevTools protocol's
 * `WebAuthn.addVirtualAuthenticator`): a real ceremony, its keys made and used by the browser,
 * verified by the stack's functions. The administrator registers a passkey, signs out, signs in
 * with it alone (its tokens say so), approves a platform on the authorization page with it,
 * removes it, and is refused with it after.
 *
 * The browser half is skipped, with the reason in its title, only where Chromium is not
 * installed (`apt-get install chromium`; .ci/run installs it when run as root).
 */
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { seriousViolations } from '../support/axe.ts';
import { CHROMIUM_SKIP_REASON, launchChromium } from '../support/chromium.ts';
import { send } from '../support/http.ts';
import { discover, INSECURE, pushAuthorization } from '../support/platforms.ts';
import { freePort } from '../support/ports.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-PASSKEYS';
const ADMIN = 'passkey-admin';
const PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;
/** How long a check waits for the page: a function's first call on the local stack loads its bundle. */
const WAIT = { timeout: 20_000 };

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
  await stackAdmin(stack, ['user', 'add', ADMIN, '--customer', CUSTOMER], `${PASSWORD}\n`);
  await stackAdmin(stack, ['user', 'admin', 'grant', ADMIN]);
});
afterAll(() => stack?.stop());

describe('POST /api/v1/passkey-login/options', () => {
  it('answers a challenge for any passkey of the host it was asked on, its user verified', async () => {
    const answer = await send(stack, 'POST', '/passkey-login/options');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.json).toMatchObject({
      userVerification: 'required',
      timeout: 300_000,
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // The console's own address: localhost, a name WebAuthn takes.
    const local = await fetch(`http://localhost:${stack.ports.http}/api/v1/passkey-login/options`, {
      method: 'POST',
    });
    expect(await local.json()).toMatchObject({ rpId: 'localhost' });
  });

  it('refuses an answer to no challenge with the one 401 of every refused passkey', async () => {
    const clientData = Buffer.from(
      JSON.stringify({
        type: 'webauthn.get',
        challenge: 'bm90LWEtY2hhbGxlbmdlLW9mLW91cnM',
        origin: 'http://localhost',
      }),
    ).toString('base64url');
    const answer = await send(stack, 'POST', '/passkey-login', {
      body: {
        response: {
          id: 'AAAAAAAAAAAAAAAAAAAAAA',
          rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
          type: 'public-key',
          response: {
            clientDataJSON: clientData,
            authenticatorData: 'AAAA',
            signature: 'AAAA',
            userHandle: 'AAAA',
          },
          clientExtensionResults: {},
        },
      },
    });
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({
      type: 'urn:parcel-auth:problem:invalid-credentials',
      detail: 'The passkey was not accepted.',
    });
  });
});

describe.skipIf(CHROMIUM_SKIP_REASON !== undefined)(
  `the console’s passkeys in Chromium’s virtual authenticator${CHROMIUM_SKIP_REASON === undefined ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`,
  () => {
    let browser: Browser;
    let page: Page;
    let devtools: CDPSession;
    let authenticatorId: string;
    const problems: string[] = [];

    const region = (name: string) => page.getByRole('region', { name, exact: true });
    const status = () => page.getByRole('status');

    async function signInWithPassword() {
      await page.goto(stack.consoleUrl);
      const form = region('Sign in');
      await form.getByLabel('Username').fill(ADMIN);
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await region('API clients').waitFor(WAIT);
    }

    /** Signs in with the passkey button; the answer of POST /passkey-login. */
    async function signInWithPasskey() {
      await page.goto(stack.consoleUrl);
      const answered = page.waitForResponse(
        (response) => response.url().endsWith('/api/v1/passkey-login'),
        WAIT,
      );
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      return answered;
    }

    async function signOut() {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await region('Sign in').waitFor(WAIT);
    }

    beforeAll(async () => {
      browser = await launchChromium();
      const context = await browser.newContext();
      page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      devtools = await context.newCDPSession(page);
      await devtools.send('WebAuthn.enable');
      // A platform authenticator that keeps discoverable credentials and verifies its user (as
      // Touch ID or Windows Hello), answering at once.
      ({ authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      }));
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('registers a passkey from the Your passkeys tab, with no serious or critical axe-core violation', async () => {
      await signInWithPassword();
      await page.getByRole('button', { name: 'Your passkeys' }).click();
      const view = region('Your passkeys');
      await view.waitFor(WAIT);
      await expect.poll(() => view.getByText('You have no passkeys yet.').isVisible(), WAIT).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);

      await view.getByLabel('Name').fill('Laptop');
      await view.getByRole('button', { name: 'Add passkey' }).click();

      await expect.poll(() => status().innerText(), WAIT).toContain('The passkey Laptop is registered');
      const item = view.getByRole('listitem');
      await expect.poll(() => item.innerText(), WAIT).toMatch(/Laptop: added .*, not used yet/);
      expect(problems).toEqual([]);
    });

    it('signs in with the passkey alone: no username, no password, and its tokens say a passkey signed in', async () => {
      await signOut();
      const answer = await signInWithPasskey();
      expect(answer.status()).toBe(200);
      const body = (await answer.json()) as { token: string; refreshToken: string; userName: string };
      expect(body.userName).toBe(ADMIN);
      expect(decodeJwt(body.token)).toMatchObject({ sub: ADMIN, amr: ['pop', 'mfa'], acr: 'phr' });
      await region('API clients').waitFor(WAIT);
      expect(await page.locator('#account-name').innerText()).toBe(ADMIN);

      // Its use is shown, and the registration is in the audit trail, by the administrator.
      await page.getByRole('button', { name: 'Your passkeys' }).click();
      await expect
        .poll(() => region('Your passkeys').getByRole('listitem').innerText(), WAIT)
        .toContain('last used');
      const events = await send(stack, 'GET', '/customer/audit-events', {
        headers: { authorization: `Bearer ${body.token}` },
      });
      expect((events.json as { events: { type: string; actor: string }[] }).events).toContainEqual(
        expect.objectContaining({ type: 'passkey.registered', actor: `user:${ADMIN}` }),
      );
    });

    it('lets a passkey’s session require passkeys of the customer’s administrators: a password’s session is then stepped up to the passkey', async () => {
      const view = region('Your passkeys');
      await view.getByLabel('Require a passkey of every administrator').check();
      await view.getByRole('button', { name: 'Save policy' }).click();
      await expect.poll(() => status().innerText(), WAIT).toContain('now requires a passkey');

      // A password's token: refused by the administrators' API with RFC 9470's challenge.
      const login = await send(stack, 'POST', '/login', { body: { username: ADMIN, password: PASSWORD } });
      const passwordToken = (login.json as { token: string }).token;
      const refused = await send(stack, 'GET', '/customer/clients', {
        headers: { authorization: `Bearer ${passwordToken}` },
      });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_user_authentication", error_description="A sign-in with a passkey is required", acr_values="phr"',
      );
      // The integrations' routes are not administration: the same token tracks parcels.
      const tracked = await send(stack, 'GET', '/tracking/12345678901234', {
        headers: { authorization: `Bearer ${passwordToken}` },
      });
      expect(tracked.status).toBe(404);

      // The console signed in with the password asks for the passkey, then carries on.
      await signOut();
      await page.goto(stack.consoleUrl);
      const form = region('Sign in');
      await form.getByLabel('Username').fill(ADMIN);
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Sign in with your passkey' });
      await dialog.waitFor(WAIT);
      const steppedUp = page.waitForResponse(
        (response) => response.url().endsWith('/api/v1/passkey-login'),
        WAIT,
      );
      await dialog.getByRole('button', { name: 'Use passkey' }).click();
      const { token } = (await (await steppedUp).json()) as { token: string };
      await region('API clients').waitFor(WAIT);

      // Each in the trail: the policy set, the password's session refused.
      const events = (
        await send(stack, 'GET', '/customer/audit-events', {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json as { events: { type: string; actor: string }[] };
      const types = events.events.map((event) => event.type);
      expect(types).toContain('policy.passkeys.required');
      expect(types).toContain('administration.password.refused');

      // Off again, from the passkey's session, once the tab has read the policy (on).
      await page.getByRole('button', { name: 'Your passkeys' }).click();
      const required = region('Your passkeys').getByLabel('Require a passkey of every administrator');
      await expect.poll(() => required.isChecked(), WAIT).toBe(true);
      await required.uncheck();
      await region('Your passkeys').getByRole('button', { name: 'Save policy' }).click();
      await expect.poll(() => status().innerText(), WAIT).toContain('no longer requires passkeys');
      expect(problems).toEqual([]);
    });

    it('approves a platform’s connection on the authorization page with the passkey alone, where the customer requires passkeys', async () => {
      const redirectUri = `http://127.0.0.1:${await freePort()}/carrier/callback`;
      const added = await stackAdmin(stack, [
        ...['platform', 'add', 'Passkey Shop', '--redirect-uri', redirectUri, '--scope', 'tracking:read'],
      ]);
      const platform = { client_id: printedValue(added, 'client id') };
      const platformAuth = oauth.ClientSecretBasic(printedValue(added, 'secret'));
      const as = await discover(new URL(stack.baseUrl).origin);
      await stackAdmin(stack, ['customer', 'policy', CUSTOMER, '--require-passkey', 'true']);
      try {
        const { url, verifier, state } = await pushAuthorization(as, platform, platformAuth, {
          redirectUri,
          scope: 'tracking:read',
        });
        // The platform's callback, answered by the browser's own route: nothing listens there.
        const arrived: string[] = [];
        await page.route(`${redirectUri}**`, (route) => {
          arrived.push(route.request().url());
          return route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title>' });
        });
        // The page on localhost, the passkey's relying party.
        const local = new URL(url);
        local.hostname = 'localhost';
        await page.goto(local.href);
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await expect.poll(() => page.getByRole('button', { name: 'Approve' }).isVisible(), WAIT).toBe(true);
        expect(await page.locator('body').innerText()).toContain(`Signed in as ${ADMIN}`);
        expect(await seriousViolations(page)).toEqual([]);
        await page.getByRole('button', { name: 'Approve' }).click();
        await expect.poll(() => arrived.length, WAIT).toBe(1);
        const params = oauth.validateAuthResponse(as, platform, new URL(arrived[0] ?? ''), state);
        const tokens = await oauth.processAuthorizationCodeResponse(
          as,
          platform,
          await oauth.authorizationCodeGrantRequest(
            as,
            platform,
            platformAuth,
            params,
            redirectUri,
            verifier,
            INSECURE,
          ),
        );
        expect(tokens).toMatchObject({ customer_id: CUSTOMER, scope: 'tracking:read' });
        expect(problems).toEqual([]);
      } finally {
        await stackAdmin(stack, ['customer', 'policy', CUSTOMER, '--require-passkey', 'false']);
      }
      // Back in the console, on its passkeys, for the next test.
      expect((await signInWithPasskey()).status()).toBe(200);
      await page.getByRole('button', { name: 'Your passkeys' }).click();
      await region('Your passkeys').getByRole('button', { name: 'Remove Laptop' }).waitFor(WAIT);
    });

    it('removes the passkey, and refuses it after: the authenticator still holds it, the stage does not', async () => {
      const view = region('Your passkeys');
      await view.getByRole('button', { name: 'Remove Laptop' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
      await expect.poll(() => status().innerText(), WAIT).toContain('The passkey Laptop is removed');
      await expect.poll(() => view.getByText('You have no passkeys yet.').isVisible(), WAIT).toBe(true);

      await signOut();
      const answer = await signInWithPasskey();
      expect(answer.status()).toBe(401);
      await expect.poll(() => status().innerText(), WAIT).toBe('The passkey was not accepted.');
      expect(await region('Sign in').isVisible()).toBe(true);
      const { credentials } = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
    });
  },
);
