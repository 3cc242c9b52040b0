/**
 * The administrators' console (GET /console) as the stage serves it, and as a customer's
 * administrator uses it in a real browser: Debian's Chromium, driven by playwright-core, against
 * the local stack started as `npm start` does. Through the page alone the administrator signs
 * in, creates an API client and copies its secret (which then gets a token), rolls, removes,
 * disables, enables, renames, unlocks and removes, reads the audit trail, and grants and revokes
 * another administrator; the tests check what the page shows and what the API then does.
 * axe-core audits each view: sign-in, clients, audit trail, administrators.
 *
 * The browser half is skipped, with the reason in its title, only where Chromium is not
 * installed (`apt-get install chromium`; .ci/run installs it when run as root).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt, importJWK, SignJWT } from 'jose';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { parseKeyring } from '../../lib/tokens/keys.ts';
import { seriousViolations } from '../support/axe.ts';
import { CHROMIUM_SKIP_REASON, launchChromium } from '../support/chromium.ts';
import { send } from '../support/http.ts';
import { stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-CONSOLE';
const ADMIN = 'console-admin';
const ADMIN_PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;
/** A user of the same customer the operator never granted administration. */
const MEMBER = 'console-member';
const MEMBER_PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;
/** An administrator of another customer, whose scopes an operator narrowed to tracking:read. */
const NARROW = 'console-narrow';
const NARROW_PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;
/** Wrong secrets of one client id before it locks (the local stage's default loginFailureLimit). */
const CLIENT_FAILURE_LIMIT = 5;
/** How long a check waits for the page: a function's first call on the local stack loads its bundle. */
const WAIT = { timeout: 15_000 };

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
  await stackAdmin(stack, ['user', 'add', ADMIN, '--customer', CUSTOMER], `${ADMIN_PASSWORD}\n`);
  await stackAdmin(stack, ['user', 'admin', 'grant', ADMIN]);
  await stackAdmin(stack, ['user', 'add', MEMBER, '--customer', CUSTOMER], `${MEMBER_PASSWORD}\n`);
  await stackAdmin(stack, ['user', 'add', NARROW, '--customer', 'C-CONSOLE-NARROW'], `${NARROW_PASSWORD}\n`);
  await stackAdmin(stack, ['user', 'scopes', NARROW, '--scope', 'tracking:read']);
  await stackAdmin(stack, ['user', 'admin', 'grant', NARROW]);
});
afterAll(() => stack?.stop());

/** The client credentials grant, the client authenticated by HTTP Basic, from `from` (a 127.x address). */
const grant = (clientId: string, clientSecret: string, from?: string) =>
  send(stack, 'POST', '/oauth/token', {
    raw: 'grant_type=client_credentials',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`,
    },
    ...(from !== undefined && { from }),
  });

describe('GET /console and its assets', () => {
  it('npm start names the console beside the API reference, on the API’s own origin under the name WebAuthn takes (localhost)', () => {
    expect(stack.consoleUrl).toBe(`http://localhost:${stack.ports.http}/console`);
    expect(stack.output()).toMatch(/^API reference .*\nconsole http:\/\/localhost:\d+\/console /m);
  });

  it('serves the page with a strict CSP, nosniff, no referrer, no framing, revalidated on every load', async () => {
    const answer = await fetch(stack.consoleUrl);

    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    const page = await answer.text();
    // Nothing inline for the CSP to refuse, and nothing from elsewhere.
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=|https?:\/\//i);
    expect(page).toContain('value="tracking:read"');
    expect(page).toContain('value="shipments:write"');
    expect(page).not.toContain('customer:admin');
  });

  it('serves its script and stylesheet with their types, and answers a current ETag 304', async () => {
    for (const [asset, type] of [
      ['console.js', 'text/javascript; charset=utf-8'],
      ['console.css', 'text/css; charset=utf-8'],
    ] as const) {
      const answer = await fetch(`${stack.consoleUrl}/${asset}`);
      expect(answer.status, asset).toBe(200);
      expect(answer.headers.get('content-type'), asset).toBe(type);
      expect(answer.headers.get('x-content-type-options'), asset).toBe('nosniff');
      const etag = answer.headers.get('etag') ?? '';
      expect(etag, asset).toMatch(/^"[\w-]+"$/);
      expect((await answer.text()).length, asset).toBeGreaterThan(1000);

      const again = await fetch(`${stack.consoleUrl}/${asset}`, { headers: { 'if-none-match': etag } });
      expect(again.status, asset).toBe(304);
    }
  });

  it('answers any other name 404 problem+json, with the same headers', async () => {
    for (const name of ['app.js', 'console.html', '..%2Fserverless.yml', 'serve.ts']) {
      const answer = await fetch(`${stack.consoleUrl}/${name}`);
      expect(answer.status, name).toBe(404);
      expect(answer.headers.get('content-type'), name).toBe('application/problem+json');
      expect(answer.headers.get('content-security-policy'), name).toContain("default-src 'none'");
      expect(await answer.json(), name).toMatchObject({ type: 'urn:parcel-auth:problem:not-found' });
    }
  });
});

describe.skipIf(CHROMIUM_SKIP_REASON !== undefined)(
  `the console in Chromium${CHROMIUM_SKIP_REASON === undefined ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`,
  () => {
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const elsewhere: string[] = [];
    const problems: string[] = [];

    /** A context whose every page is watched: requests elsewhere, script errors, console errors. */
    async function watchedContext(): Promise<BrowserContext> {
      const made = await browser.newContext({
        viewport: { width: 1280, height: 1000 },
        permissions: ['clipboard-read', 'clipboard-write'],
      });
      const origin = new URL(stack.consoleUrl).origin;
      made.on('request', (request) => {
        if (new URL(request.url()).origin !== origin) elsewhere.push(request.url());
      });
      made.on('page', (opened) => {
        opened.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        opened.on('console', (message) => {
          // Chromium logs every 4xx a fetch gets; the refusals the tests cause are expected.
          if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
            problems.push(`console error: ${message.text()}`);
        });
      });
      return made;
    }

    const region = (on: Page, name: string) => on.getByRole('region', { name, exact: true });
    const status = (on: Page) => on.getByRole('status');
    const clientCard = (name: string) => page.getByRole('article', { name, exact: true });

    async function signIn(on: Page, username: string, password: string) {
      await on.goto(stack.consoleUrl);
      const form = region(on, 'Sign in');
      await form.getByLabel('Username').fill(username);
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    }

    /** The secret panel's client id, secret id and secret, once shown. */
    async function shownSecret() {
      const panel = region(page, 'Copy the new secret now');
      await panel.waitFor();
      return {
        panel,
        clientId: await panel.getByLabel('Client ID').inputValue(),
        secretId: await panel.getByLabel('Secret ID').inputValue(),
        clientSecret: await panel.getByLabel('Client secret').inputValue(),
      };
    }

    /** Confirms the open <dialog> with `button`. */
    async function confirmWith(button: string) {
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: button, exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
    }

    const hasFocus = (target: Locator) =>
      target.evaluate(
        (element) =>
          (element as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument
            .activeElement === element,
      );

    /** The ISO time in the title of the `column`th date of a secrets table row. */
    const rowTime = (row: Locator, column: number) =>
      row.locator('td').nth(column).locator('time').getAttribute('title');

    beforeAll(async () => {
      browser = await launchChromium();
      context = await watchedContext();
      page = await context.newPage();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('shows the sign-in form with no serious or critical axe-core violation', async () => {
      await page.goto(stack.consoleUrl);

      await expect.poll(() => region(page, 'Sign in').isVisible(), WAIT).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    });

    it('runs no script the page did not load from its own origin: the CSP refuses an injected one', async () => {
      const before = problems.length;
      const fresh = await context.newPage();
      await fresh.goto(stack.consoleUrl);
      const refused = new Promise<string>((done) =>
        fresh.on('console', (message) => {
          if (message.text().includes('Content Security Policy')) done(message.text());
        }),
      );

      await fresh.addScriptTag({ content: 'globalThis.injected = true;' }).catch(() => undefined);

      expect(await refused).toContain("script-src 'self'");
      expect(await fresh.evaluate(() => (globalThis as { injected?: boolean }).injected)).toBeUndefined();
      await fresh.close();
      // The refusal this test caused is no problem of the page.
      expect(problems.slice(before).every((problem) => problem.includes('Content Security Policy'))).toBe(
        true,
      );
      problems.splice(before);
    });

    it('tells a user who is not an administrator so, and signs it out', async () => {
      const other = await context.newPage();
      await signIn(other, MEMBER, MEMBER_PASSWORD);

      const notAdmin = region(other, 'Not an administrator');
      await notAdmin.waitFor();
      expect(await notAdmin.innerText()).toContain(`${MEMBER} may sign in, but is not an administrator`);
      expect(await other.getByRole('region', { name: 'API clients' }).count()).toBe(0);

      await other.getByRole('button', { name: 'Sign out' }).click();
      await region(other, 'Sign in').waitFor();
      expect(await status(other).innerText()).toBe('Signed out.');
      await other.close();
    });

    it('says which scope is beyond a narrowed administrator’s own, and keeps it in the clients view', async () => {
      const other = await context.newPage();
      await signIn(other, NARROW, NARROW_PASSWORD);
      await region(other, 'API clients').waitFor();

      const create = other.getByRole('form', { name: 'Create a client' });
      await create.getByLabel('Name').fill('Beyond');
      await create.getByRole('checkbox', { name: /shipments:write/ }).check();
      await create.getByRole('button', { name: 'Create client' }).click();

      await expect.poll(() => status(other).innerText(), WAIT).toContain('does not include shipments:write');
      expect(await region(other, 'API clients').isVisible()).toBe(true);
      expect(await other.getByText('The customer has no API clients yet.').isVisible()).toBe(true);
      expect(await seriousViolations(other)).toEqual([]);
      await other.close();
    });

    it('refuses a wrong password with a message, then signs the administrator in to the clients view', async () => {
      await signIn(page, ADMIN, 'not-the-password');
      await expect.poll(() => status(page).innerText(), WAIT).toBe('The username or password is incorrect.');

      await signIn(page, ADMIN, ADMIN_PASSWORD);

      await region(page, 'API clients').waitFor();
      expect(await status(page).innerText()).toBe(`Signed in as ${ADMIN}.`);
      expect(await page.getByText('The customer has no API clients yet.').isVisible()).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    });

    let first: { clientId: string; secretId: string; clientSecret: string };

    it('creates a client and shows its secret once, with a copy button; the secret gets a token', async () => {
      const create = page.getByRole('form', { name: 'Create a client' });
      await create.getByLabel('Name').fill('Warehouse label printer');
      await create.getByRole('checkbox', { name: /tracking:read/ }).check();
      await create.getByRole('button', { name: 'Create client' }).click();

      const shown = await shownSecret();
      first = shown;
      expect(shown.clientId).toMatch(/^pcl_[0-9a-f]{20}$/);
      expect(shown.clientSecret).toMatch(/^pcs_/);
      expect(await shown.panel.innerText()).toContain('It is shown once.');
      expect(await shown.panel.getByLabel('Client secret').getAttribute('readonly')).not.toBeNull();
      await shown.panel.getByRole('button', { name: 'Copy secret' }).click();
      await expect
        .poll(() => status(page).innerText(), WAIT)
        .toBe('Copied the client secret to the clipboard.');
      const clipboard = await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      );
      expect(clipboard).toBe(shown.clientSecret);

      const token = await grant(shown.clientId, shown.clientSecret);
      expect(token.status).toBe(200);
      expect(token.json.scope).toBe('tracking:read');

      const card = clientCard('Warehouse label printer');
      expect(await card.innerText()).toContain(shown.clientId);
      expect(await card.locator('tbody tr').count()).toBe(1);
      await shown.panel.getByRole('button', { name: 'I have stored it' }).click();
      expect(await shown.panel.isVisible()).toBe(false);
      expect(await page.getByLabel('Client secret').inputValue()).toBe('');
      expect(await page.content()).not.toContain(shown.clientSecret);
    });

    let second: { secretId: string; clientSecret: string };

    it('rolls: adds a second secret and expires the first in an hour; both get tokens meanwhile', async () => {
      const card = clientCard('Warehouse label printer');
      await card.getByLabel('Expire the other secrets').selectOption({ label: 'in 1 hour' });
      const before = Date.now();
      await card.getByRole('button', { name: /^Add secret/ }).click();

      second = await shownSecret();
      const after = Date.now();
      expect(second.secretId).not.toBe(first.secretId);
      await expect.poll(() => card.locator('tbody tr').count(), WAIT).toBe(2);
      const firstRow = card.locator('tbody tr', { hasText: first.secretId });
      const expires = Date.parse((await rowTime(firstRow, 2)) ?? '');
      expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
      expect(expires).toBeLessThanOrEqual(after + 3600_000 + 1000);
      const secondRow = card.locator('tbody tr', { hasText: second.secretId });
      expect(await secondRow.locator('td').nth(2).innerText()).toBe('never');
      expect((await grant(first.clientId, first.clientSecret)).status).toBe(200);
      expect((await grant(first.clientId, second.clientSecret)).status).toBe(200);
      await page.getByRole('button', { name: 'I have stored it' }).click();
    });

    it('says why a third secret is refused, and shows none', async () => {
      const card = clientCard('Warehouse label printer');
      await card.getByRole('button', { name: /^Add secret/ }).click();

      await expect.poll(() => status(page).innerText(), WAIT).toContain('The client has 2 live secrets');
      expect(await region(page, 'Copy the new secret now').count()).toBe(0);
      expect(await card.locator('tbody tr').count()).toBe(2);
    });

    it('removes a secret after a confirmation; the removed one gets no more tokens', async () => {
      const card = clientCard('Warehouse label printer');
      await card.getByRole('button', { name: `Remove secret ${first.secretId}` }).click();
      const dialog = page.getByRole('dialog');
      expect(await dialog.innerText()).toContain(first.secretId);
      await confirmWith('Remove secret');

      await expect.poll(() => card.locator('tbody tr').count(), WAIT).toBe(1);
      await expect.poll(() => status(page).innerText(), WAIT).toContain(`Removed secret ${first.secretId}`);
      expect((await grant(first.clientId, first.clientSecret)).status).toBe(401);
      expect((await grant(first.clientId, second.clientSecret)).status).toBe(200);
    });

    it('cancels a destructive action at the confirmation, by keyboard alone: nothing changes', async () => {
      const card = clientCard('Warehouse label printer');
      const remove = card.getByRole('button', { name: 'Remove client Warehouse label printer' });
      await remove.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      // Cancel has the focus: Enter alone destroys nothing.
      expect(await hasFocus(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
      await page.keyboard.press('Enter');

      await expect.poll(() => status(page).innerText(), WAIT).toBe('Cancelled: nothing was changed.');
      expect(await card.isVisible()).toBe(true);
      expect(await hasFocus(remove)).toBe(true);
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => hasFocus(remove), WAIT).toBe(true);
      expect(await card.isVisible()).toBe(true);
    });

    it('disables a client after a confirmation, and enables it again', async () => {
      const card = clientCard('Warehouse label printer');
      await card.getByRole('button', { name: /^Disable/ }).click();
      await confirmWith('Disable client');
      await expect.poll(() => card.getByText('Disabled', { exact: true }).isVisible(), WAIT).toBe(true);
      // The list is drawn anew: the focus is on the button that took Disable's place.
      expect(await hasFocus(card.getByRole('button', { name: /^Enable/ }))).toBe(true);
      expect((await grant(first.clientId, second.clientSecret)).status).toBe(401);

      await card.getByRole('button', { name: /^Enable/ }).click();

      await expect.poll(() => card.getByText('Enabled', { exact: true }).isVisible(), WAIT).toBe(true);
      expect((await grant(first.clientId, second.clientSecret)).status).toBe(200);
    });

    it('renames a client', async () => {
      await clientCard('Warehouse label printer')
        .getByRole('button', { name: /^Rename/ })
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('New name').fill('Label printer, hall B');
      await confirmWith('Rename');

      await clientCard('Label printer, hall B').waitFor();
      expect(await clientCard('Warehouse label printer').count()).toBe(0);
    });

    it('unlocks a client id that wrong secrets locked: its secret gets tokens again from anywhere', async () => {
      const stranger = '127.0.0.9';
      // The earlier tests' refused grants count too: a success erases no failure of another
      // source (docs/behaviour.md), so the lock may come before the stranger's fifth.
      const answers: number[] = [];
      for (let attempt = 0; attempt < CLIENT_FAILURE_LIMIT; attempt += 1)
        answers.push((await grant(first.clientId, newClientSecret(new Date()).secret, stranger)).status);
      expect(answers[0]).toBe(401);
      expect(answers.filter((answer) => answer !== 401 && answer !== 429)).toEqual([]);
      expect((await grant(first.clientId, second.clientSecret, stranger)).status).toBe(429);

      await clientCard('Label printer, hall B')
        .getByRole('button', { name: /^Unlock/ })
        .click();

      await expect.poll(() => status(page).innerText(), WAIT).toContain('Unlocked Label printer, hall B');
      expect((await grant(first.clientId, second.clientSecret, stranger)).status).toBe(200);
    });

    it('reads the audit trail, newest first, and loads more until its end', async () => {
      // More events than one page (50): renames through the API, as the administrator.
      const login = await fetch(`${stack.baseUrl}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: ADMIN, password: ADMIN_PASSWORD }),
      });
      const { token } = (await login.json()) as { token: string };
      for (let index = 1; index <= 50; index += 1) {
        const renamed = await fetch(`${stack.baseUrl}/customer/clients/${first.clientId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: index === 50 ? 'Label printer, hall B' : `Label printer ${index}` }),
        });
        expect(renamed.status).toBe(200);
      }

      await page.getByRole('button', { name: 'Audit trail' }).click();
      const audit = region(page, 'Audit trail');
      const rows = audit.locator('tbody tr');
      await expect.poll(() => rows.count(), WAIT).toBe(50);
      expect(await rows.first().innerText()).toContain('Client renamed');
      expect(await rows.first().innerText()).toContain(`user:${ADMIN}`);
      const times = await rows
        .locator('td:first-child time')
        .evaluateAll((cells) => cells.map((cell) => (cell as unknown as { dateTime: string }).dateTime));
      expect(times).toEqual([...times].sort().reverse());
      expect(await seriousViolations(page)).toEqual([]);

      const more = audit.getByRole('button', { name: 'Load more' });
      await more.click();
      await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(50);
      await expect.poll(() => more.isVisible(), WAIT).toBe(false);
      const text = await audit.innerText();
      for (const event of [
        'Client created',
        'Secret added, the others expiring',
        'Secret removed',
        'Client disabled',
        'Client enabled',
        'Client unlocked',
        'Authentication failed',
      ])
        expect(text, event).toContain(event);
      expect(text).toContain('127.0.0.9');
    });

    it('grants administration to a user of the customer, who then uses the console, and revokes it, but not the last', async () => {
      await page.getByRole('button', { name: 'Administrators' }).click();
      const admins = region(page, 'Administrators');
      const listed = admins.getByRole('listitem');
      await expect.poll(() => listed.count(), WAIT).toBe(1);
      expect(await listed.innerText()).toContain(`${ADMIN} (you)`);
      expect(await seriousViolations(page)).toEqual([]);

      await admins.getByLabel('Username').fill(MEMBER);
      await admins.getByRole('button', { name: 'Grant' }).click();

      await expect.poll(() => listed.count(), WAIT).toBe(2);
      expect(await status(page).innerText()).toContain(`${MEMBER} is an administrator now`);
      const member = await context.newPage();
      await signIn(member, MEMBER, MEMBER_PASSWORD);
      await region(member, 'API clients').waitFor();

      await admins.getByRole('button', { name: `Revoke ${MEMBER}` }).click();
      await confirmWith('Revoke');

      await expect.poll(() => listed.count(), WAIT).toBe(1);
      // Once the revocation reaches the authorizer (1 s on the local stage), the member's
      // tokens and session are over: its next action shows the sign-in form.
      await sleep(1500);
      await member.getByRole('button', { name: 'Audit trail' }).click();
      await region(member, 'Sign in').waitFor();
      expect(await status(member).innerText()).toBe('Your session has ended. Sign in again.');
      await member.close();

      // The customer's last administration, here one's own, is kept: the page says why.
      await admins.getByRole('button', { name: `Revoke ${ADMIN}` }).click();
      await confirmWith('Revoke');
      await expect
        .poll(() => status(page).innerText(), WAIT)
        .toBe('This is the customer’s last administrator: grant administration to another user first.');
      expect(await listed.innerText()).toContain(`${ADMIN} (you)`);
    });

    it('removes a client after a confirmation: its secret gets no more tokens', async () => {
      await page.getByRole('button', { name: 'API clients' }).click();
      await clientCard('Label printer, hall B')
        .getByRole('button', { name: /^Remove client/ })
        .click();
      await confirmWith('Remove client');

      await expect
        .poll(() => page.getByText('The customer has no API clients yet.').isVisible(), WAIT)
        .toBe(true);
      expect((await grant(first.clientId, second.clientSecret)).status).toBe(401);
    });

    it('asks for the password again when the login is not recent, then creates the client, and the old session’s token stops', async () => {
      // The page's next login answer carries an access token of a login 20 minutes ago, signed
      // with the stack's key: the API then requires the recent login a secret needs.
      const keyring = parseKeyring(
        await readFile(join(stack.dataDir, 'keys', 'signing-keyring.json'), 'utf8'),
      );
      const key = await importJWK(keyring.active, 'EdDSA');
      let staleToken = '';
      await page.route(
        '**/api/v1/login',
        async (route) => {
          const answer = await route.fetch();
          const body = (await answer.json()) as { token: string; refreshToken: string };
          const claims = decodeJwt(body.token);
          const token = await new SignJWT({ ...claims, auth_time: Math.floor(Date.now() / 1000) - 1200 })
            .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keyring.active.kid })
            .sign(key);
          staleToken = token;
          await route.fulfill({ response: answer, json: { ...body, token } });
        },
        { times: 1 },
      );
      // The access token of the session Sign out ends, as the page last sent it.
      let signedOut = '';
      const lastBearer = (request: import('playwright-core').Request) => {
        const authorization = request.headers().authorization ?? '';
        if (authorization.startsWith('Bearer ')) signedOut = authorization.slice('Bearer '.length);
      };
      page.on('request', lastBearer);
      await page.getByRole('button', { name: 'Audit trail' }).click();
      await expect.poll(() => signedOut !== '', WAIT).toBe(true);
      page.off('request', lastBearer);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, ADMIN, ADMIN_PASSWORD);
      await region(page, 'API clients').waitFor();

      const create = page.getByRole('form', { name: 'Create a client' });
      await create.getByLabel('Name').fill('Shop integration');
      await create.getByRole('checkbox', { name: /shipments:write/ }).check();
      await create.getByRole('button', { name: 'Create client' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm your password' });
      await dialog.waitFor();
      expect(await dialog.getByLabel('Username').inputValue()).toBe(ADMIN);
      await dialog.getByLabel('Password').fill('not-the-password');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await expect
        .poll(() => dialog.getByText('The password is incorrect. Try again.').isVisible(), WAIT)
        .toBe(true);
      await dialog.getByLabel('Password').fill(ADMIN_PASSWORD);
      await dialog.getByRole('button', { name: 'Confirm' }).click();

      const shown = await shownSecret();
      expect((await grant(shown.clientId, shown.clientSecret)).status).toBe(200);
      expect(await clientCard('Shop integration').isVisible()).toBe(true);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      // The page logged the session it replaced out: its access token mints nothing more.
      const listWith = async (token: string) =>
        (await send(stack, 'GET', '/customer/clients', { headers: { authorization: `Bearer ${token}` } }))
          .status;
      await expect.poll(() => listWith(staleToken), WAIT).toBe(401);
      expect(await listWith(signedOut)).toBe(401);
    });

    it('refreshes an expired access token once, and shows the sign-in form when the session is over', async () => {
      let refreshes = 0;
      page.on('request', (request) => {
        if (request.url().endsWith('/api/v1/token/refresh')) refreshes += 1;
      });
      const keyring = parseKeyring(
        await readFile(join(stack.dataDir, 'keys', 'signing-keyring.json'), 'utf8'),
      );
      const key = await importJWK(keyring.active, 'EdDSA');
      // The page's next login answer carries an access token that has expired.
      await page.route(
        '**/api/v1/login',
        async (route) => {
          const answer = await route.fetch();
          const body = (await answer.json()) as { token: string };
          const now = Math.floor(Date.now() / 1000);
          const token = await new SignJWT({ ...decodeJwt(body.token), iat: now - 120, exp: now - 60 })
            .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keyring.active.kid })
            .sign(key);
          await route.fulfill({ response: answer, json: { ...body, token } });
        },
        { times: 1 },
      );
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, ADMIN, ADMIN_PASSWORD);

      await clientCard('Shop integration').waitFor();
      expect(refreshes).toBe(1);

      // The session ends elsewhere (an operator's `user logout`): once the revocation reaches
      // the authorizer (its cache: 1 s on the local stage), the next call's refresh is refused.
      await stackAdmin(stack, ['user', 'logout', ADMIN]);
      await sleep(1500);
      await page.getByRole('button', { name: 'Audit trail' }).click();

      await region(page, 'Sign in').waitFor();
      expect(await status(page).innerText()).toBe('Your session has ended. Sign in again.');
      expect(await region(page, 'Sign in').getByLabel('Username').inputValue()).toBe(ADMIN);
    });

    it('kept no token in storage or cookies, loaded nothing from elsewhere, and showed no script error', async () => {
      const kept = await page.evaluate(() => {
        const scope = globalThis as unknown as {
          localStorage: { length: number };
          sessionStorage: { length: number };
          document: { cookie: string };
        };
        return {
          local: scope.localStorage.length,
          session: scope.sessionStorage.length,
          cookie: scope.document.cookie,
        };
      });
      expect(kept).toEqual({ local: 0, session: 0, cookie: '' });
      expect((await context.cookies()).length).toBe(0);
      expect(elsewhere).toEqual([]);
      expect(problems).toEqual([]);
    });
  },
);
