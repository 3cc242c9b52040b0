/**
 * The API reference page that `npm start` serves, as an integrator uses it in a real browser:
 * Debian's Chromium, driven by playwright-core, against the local stack started as `npm start`
 * does. Through the page alone: log in as the demo user with try-it-out, Authorize with the
 * access token, register a shipment and track it; or Authorize as an API client with its id
 * and secret (the oauth2 scheme's client credentials flow) and do the same; log in with the
 * login example as the page gives it, the demo login. The test reads what the page shows. A
 * screenshot of the tracked shipment is kept under the system's temp directory.
 *
 * Skipped, with the reason in its title, only where Chromium is not installed
 * (`apt-get install chromium`; .ci/run installs it when run as root).
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../dev/local/reference.ts';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { CHROMIUM_SKIP_REASON, launchChromium } from '../support/chromium.ts';
import { addStackClient } from '../support/stack-admin.ts';

const ARTIFACTS = join(tmpdir(), 'parcel-auth-artifacts');
/** How long the page may take to render on a loaded machine: the default second is not enough for 25 operations. */
const WAIT = { timeout: 15_000 };

/** An operation's block on the page, opened, with try-it-out on. */
async function tryOut(page: Page, operation: string): Promise<Locator> {
  const block = page.locator(`#operations-${operation}`);
  await block.locator('.opblock-summary').click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  return block;
}

/** Executes the opened operation and reads the status and body the page shows. */
async function execute(block: Locator): Promise<{ status: string; body: string }> {
  await block.getByRole('button', { name: 'Execute' }).click();
  const response = block.locator('.live-responses-table .response').first();
  await response.waitFor();
  return {
    status: (await response.locator('.response-col_status').innerText()).trim(),
    body: await response.locator('.response-col_description pre.microlight').first().innerText(),
  };
}

/** `client add` for the demo customer with both scopes, as an operator runs it: the id and secret it prints. */
const addDemoClient = (stack: LocalStack) =>
  addStackClient(stack, 'DEMO-CUSTOMER', ['tracking:read', 'shipments:write']);

describe.skipIf(CHROMIUM_SKIP_REASON !== undefined)(
  `the API reference page in Chromium${CHROMIUM_SKIP_REASON === undefined ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`,
  () => {
    let stack: LocalStack;
    let browser: Browser;
    let page: Page;
    const problems: string[] = [];
    const elsewhere: string[] = [];

    beforeAll(async () => {
      stack = await startLocalStack();
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      page.on('request', (request) => {
        if (!request.url().startsWith('http://127.0.0.1:')) elsewhere.push(request.url());
      });
    });
    afterAll(async () => {
      await browser?.close();
      await stack?.stop();
    });

    it('is announced by npm start with the local API as its default server', async () => {
      expect(stack.output()).toContain(`API reference ${stack.referenceUrl}`);

      await page.goto(stack.referenceUrl);

      await expect
        .poll(() => page.locator('.servers select').inputValue(), WAIT)
        .toBe(`http://127.0.0.1:${stack.ports.http}`);
      await expect.poll(() => page.locator('.opblock').count(), WAIT).toBeGreaterThanOrEqual(7);
    });

    it('logs in, authorizes with the access token and tracks a shipment, all from the page', async () => {
      const login = await tryOut(page, 'authentication-login');
      await login
        .locator('textarea.body-param__text')
        .fill(JSON.stringify({ username: stack.demo.username, password: stack.demo.password }));
      const loggedIn = await execute(login);
      expect(loggedIn.status).toBe('200');
      const token = JSON.parse(loggedIn.body).token;
      expect(token).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);

      await page.getByRole('button', { name: 'Authorize' }).first().click();
      const dialog = page.locator('.modal-ux');
      const bearerForm = dialog.locator('form').filter({ has: page.locator('input#auth-bearer-value') });
      await bearerForm.locator('input#auth-bearer-value').fill(token);
      await bearerForm.getByRole('button', { name: 'Apply credentials' }).click();
      await dialog.getByRole('button', { name: 'Close' }).first().click();

      // The spec's example shipment, as the page fills it in.
      const created = await execute(await tryOut(page, 'shipments-createShipment'));
      expect(created.status).toBe('201');
      const { parcelNumber } = JSON.parse(created.body);
      expect(parcelNumber).toMatch(/^\d{14}$/);

      const track = await tryOut(page, 'shipments-trackShipment');
      await track.locator('input[placeholder="parcelNumber"]').fill(parcelNumber);
      const tracked = await execute(track);

      expect(tracked.status).toBe('200');
      expect(JSON.parse(tracked.body)).toMatchObject({
        parcelNumber,
        status: 'registered',
        shipment: { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.5 }] },
      });
      await mkdir(ARTIFACTS, { recursive: true });
      await track.screenshot({ path: join(ARTIFACTS, 'api-reference-tracking.png') });
    }, 90_000);

    it('authorizes as an API client with its id and secret, then registers and tracks a shipment', async () => {
      const { clientId, clientSecret } = await addDemoClient(stack);
      const fresh = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      fresh.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      fresh.on('request', (request) => {
        if (!request.url().startsWith('http://127.0.0.1:')) elsewhere.push(request.url());
      });
      await fresh.goto(stack.referenceUrl);

      await fresh.getByRole('button', { name: 'Authorize' }).first().click();
      // The document's oauth2 scheme, as Swagger UI shows it: its flow, its token URL, its scopes.
      const oauth2 = fresh.locator('.modal-ux .auth-container').filter({ hasText: 'clientCredentials' });
      await expect.poll(() => oauth2.innerText(), WAIT).toContain('/api/v1/oauth/token');
      for (const scope of ['tracking:read', 'shipments:write'])
        await expect.poll(() => oauth2.innerText(), WAIT).toContain(scope);
      await oauth2.locator('input[id^="client_id"]').fill(clientId);
      await oauth2.locator('input[id^="client_secret"]').fill(clientSecret);
      for (const scope of ['tracking:read', 'shipments:write']) {
        await oauth2.locator(`label[for^="${scope}-"]`).click();
      }
      await oauth2.getByRole('button', { name: 'Apply given OAuth2 credentials' }).click();
      await expect.poll(() => oauth2.innerText(), WAIT).toContain('Authorized');
      await fresh.locator('.modal-ux').getByRole('button', { name: 'Close' }).first().click();

      const created = await execute(await tryOut(fresh, 'shipments-createShipment'));
      expect(created.status).toBe('201');
      const { parcelNumber } = JSON.parse(created.body);
      const track = await tryOut(fresh, 'shipments-trackShipment');
      await track.locator('input[placeholder="parcelNumber"]').fill(parcelNumber);
      const tracked = await execute(track);

      expect(tracked.status).toBe('200');
      expect(JSON.parse(tracked.body)).toMatchObject({ parcelNumber, status: 'registered' });
      await fresh.close();
    }, 90_000);

    it('logs in with the login example as the page gives it, the demo login: Try it out, Execute, 200', async () => {
      // The reference page of dev/local/reference.ts given the stack's demo login, beside the stack.
      const reference = await startReferenceServer({
        port: 0,
        apiOrigin: new URL(stack.baseUrl).origin,
        demo: stack.demo,
      });
      const fresh = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      fresh.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      fresh.on('request', (request) => {
        if (!request.url().startsWith('http://127.0.0.1:')) elsewhere.push(request.url());
      });
      try {
        await fresh.goto(reference.url);
        for (const operation of ['authentication-login', 'authentication-loginExtended']) {
          const block = await tryOut(fresh, operation);
          const example = await block.locator('textarea.body-param__text').inputValue();
          expect(JSON.parse(example), operation).toEqual(stack.demo);

          const loggedIn = await execute(block);

          expect(loggedIn.status, operation).toBe('200');
          expect(JSON.parse(loggedIn.body).token, operation).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
        }
      } finally {
        await fresh.close();
        await reference.close();
      }
    }, 60_000);

    it('loaded nothing from outside this machine and showed no script error', () => {
      expect(elsewhere).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('without Authorize, the same call is refused 401 by the authorizer', async () => {
      const fresh = await browser.newPage();
      await fresh.goto(stack.referenceUrl);
      const track = await tryOut(fresh, 'shipments-trackShipment');
      await track.locator('input[placeholder="parcelNumber"]').fill('12345678901234');

      const refused = await execute(track);

      expect(refused.status).toBe('401');
    }, 60_000);
  },
);
