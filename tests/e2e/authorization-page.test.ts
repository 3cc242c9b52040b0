/**
 * The authorization page and the console's connected platforms in a real browser: Debian's
 * Chromium, driven by playwright-core, against the local stack. A platform pushes its request
 * (oauth4webapi); the customer's administrator signs in on the page, reads what the platform
 * asks and approves; Chromium follows the answer to the platform's redirect URI (a server this
 * test starts on 127.0.0.1), CSP `form-action` and all; the code gets tokens. Then the
 * administrator ends the connection in the console. axe-core audits each page.
 *
 * Skipped, with the reason in its title, only where Chromium is not installed.
 */
import { createServer, type Server } from 'node:http';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { seriousViolations } from '../support/axe.ts';
import { CHROMIUM_SKIP_REASON, launchChromium } from '../support/chromium.ts';
import { discover, INSECURE, pushAuthorization } from '../support/platforms.ts';
import { freePort } from '../support/ports.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-AUTHZ-PAGE';
const ADMIN = 'page-admin';
const PASSWORD = 'a page admin’s long password';
const WAIT = { timeout: 15_000 };
const insecure = INSECURE;

describe.skipIf(CHROMIUM_SKIP_REASON !== undefined)(
  `the authorization page in Chromium${CHROMIUM_SKIP_REASON === undefined ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`,
  () => {
    let stack: LocalStack;
    let browser: Browser;
    let page: Page;
    let callbacks: Server;
    let redirectUri: string;
    let as: oauth.AuthorizationServer;
    let platform: oauth.Client;
    let platformAuth: oauth.ClientAuth;
    const arrived: string[] = [];
    /** The first test's refresh token, which the console's End stops. */
    let refreshToken = '';
    const problems: string[] = [];

    const pushed = () =>
      pushAuthorization(as, platform, platformAuth, { redirectUri, scope: 'tracking:read' });

    beforeAll(async () => {
      stack = await startLocalStack();
      const port = await freePort();
      callbacks = createServer((request, response) => {
        // The redirects alone, not the browser's favicon request.
        if (request.url?.startsWith('/carrier/callback') === true)
          arrived.push(`http://127.0.0.1:${port}${request.url}`);
        response
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><title>Shop</title><p>Connected.');
      });
      await new Promise<void>((resolve) => callbacks.listen(port, '127.0.0.1', resolve));
      redirectUri = `http://127.0.0.1:${port}/carrier/callback`;
      const origin = new URL(stack.baseUrl).origin;
      as = await discover(origin);
      const added = await stackAdmin(stack, [
        'platform',
        'add',
        'Shoply Connect',
        '--redirect-uri',
        redirectUri,
        '--scope',
        'tracking:read',
      ]);
      platform = { client_id: printedValue(added, 'client id') };
      platformAuth = oauth.ClientSecretBasic(printedValue(added, 'secret'));
      await stackAdmin(stack, ['user', 'add', ADMIN, '--customer', CUSTOMER], `${PASSWORD}\n`);
      await stackAdmin(stack, ['user', 'admin', 'grant', ADMIN]);
      browser = await launchChromium();
      const context = await browser.newContext();
      context.on('page', (opened) => {
        opened.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        opened.on('console', (message) => {
          if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
            problems.push(`console error: ${message.text()}`);
        });
      });
      page = await context.newPage();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => callbacks?.close(resolve));
      await stack?.stop();
    });

    it('signs the administrator in, shows the platform and its scopes, and approving lands at the redirect URI with a code that gets tokens', async () => {
      const { url, verifier, state } = await pushed();
      await page.goto(url);
      await expect
        .poll(() => page.getByRole('heading', { name: /Connect Shoply Connect/ }).isVisible(), WAIT)
        .toBe(true);
      expect(await page.content()).toContain('Track the customer');
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel('Username').fill(ADMIN);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect
        .poll(() => page.getByRole('alert').innerText(), WAIT)
        .toContain('The username or password is wrong.');

      await page.getByLabel('Username').fill(ADMIN);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.getByRole('button', { name: 'Approve' }).isVisible(), WAIT).toBe(true);
      expect(await page.content()).toContain(CUSTOMER);
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
          insecure,
        ),
      );
      expect(tokens).toMatchObject({ customer_id: CUSTOMER, scope: 'tracking:read' });
      refreshToken = String(tokens.refresh_token);
      expect(problems).toEqual([]);
    });

    it('cannot be framed: a page that frames it gets Chromium’s refusal, and nothing of it', async () => {
      const { url } = await pushed();
      await page.setContent(`<iframe src="${url}" title="framed"></iframe>`);
      await expect
        .poll(() => problems.some((problem) => /frame-ancestors|X-Frame-Options/.test(problem)), WAIT)
        .toBe(true);
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      expect((await frame?.content()) ?? '').not.toContain('Sign in');
      // The refusal was what this test caused; the next starts clean.
      problems.length = 0;
    });

    it('lists the platform in the console, where ending it stops its refresh token', async () => {
      await page.goto(stack.consoleUrl);
      const form = page.getByRole('region', { name: 'Sign in', exact: true });
      await form.getByLabel('Username').fill(ADMIN);
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Platforms' }).click();
      const list = page.getByRole('region', { name: 'Connected platforms', exact: true });
      await expect.poll(() => list.innerText(), WAIT).toContain('Shoply Connect');
      expect(await list.innerText()).toContain(`approved by ${ADMIN}`);
      expect(await seriousViolations(page)).toEqual([]);
      await list.getByRole('button', { name: /^End/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'End', exact: true }).click();
      await expect.poll(() => page.getByRole('status').innerText(), WAIT).toContain('has ended');
      await expect.poll(() => list.innerText(), WAIT).toContain('No platform is connected.');
      const refused = await oauth.refreshTokenGrantRequest(
        as,
        platform,
        platformAuth,
        refreshToken,
        insecure,
      );
      expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
      expect(problems).toEqual([]);
    });

    it('approves nothing after a password’s sign-in where the customer requires passkeys: it asks for the passkey', async () => {
      await stackAdmin(stack, ['customer', 'policy', CUSTOMER, '--require-passkey', 'true']);
      try {
        const { url } = await pushed();
        await page.goto(url);
        await page.getByLabel('Username').fill(ADMIN);
        await page.getByLabel('Password').fill(PASSWORD);
        const answered = page.waitForResponse((response) => response.request().method() === 'POST', WAIT);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        expect((await answered).status()).toBe(403);
        await expect
          .poll(() => page.locator('body').innerText(), WAIT)
          .toContain('requires its administrators to sign in with a passkey');
        expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).toBe(true);
        expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      } finally {
        await stackAdmin(stack, ['customer', 'policy', CUSTOMER, '--require-passkey', 'false']);
      }
    });
  },
);
