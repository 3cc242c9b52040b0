/**
 * The Postman collection integrators start from (integrators/postman/), run as shipped by
 * newman's Node API against the local stack started as `npm start` does: the committed
 * environment, with only what its README has a person fill in set on top: the stack's address,
 * the demo password and the demo API client's id and secret, which `npm start` prints and
 * keeps in the data directory's demo-credentials.json (the demo user administers the demo
 * customer from the first start, for the Administrator folder), and the id and secret of the
 * platform the README has the person register with the admin CLI. The Platforms folder has a
 * browser in its middle, which newman cannot be: the test runs the collection as the README has
 * a person run it, the whole collection first (which skips *Act for the customer* until
 * `callbackUrl` is set), then plays the person's browser with fetch on the authorization page
 * (sign in as the demo user, approve) and sets `callbackUrl` to where the browser was sent, then
 * runs the folder *Act for the customer* with the collection variables the first run left. No
 * pm.test fails, every request gets its status, and every answer is held to docs/openapi.yaml.
 * It runs twice against the same stack, as an integrator runs it again and again.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERNAME, type DemoData, demoCredentialsFile } from '../../dev/local/seed.ts';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { LocalStackEnvSchema } from '../../infra/local-stage.ts';
import { assertDocumented } from '../support/openapi.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const FOLDER = resolve(import.meta.dirname, '../../integrators/postman');
const COLLECTION = resolve(FOLDER, 'parcel-auth.postman_collection.json');
const ENVIRONMENT = resolve(FOLDER, 'local.postman_environment.json');

/** Every request of the collection, in the order a run sends them, and the status it must get. */
const EXPECTED_STATUS: Readonly<Record<string, number>> = {
  'Log in': 200,
  'Log in, extended': 200,
  'Refresh the tokens': 200,
  'Create a shipment': 201,
  'Track the shipment': 200,
  'Get a client token': 200,
  'Track the shipment as the client': 200,
  "List the customer's API clients": 200,
  "List the customer's administrators": 200,
  'Create an API client': 201,
  'Get the API client': 200,
  "Roll the client's secret": 201,
  'Remove the old secret': 204,
  'Rename the API client': 200,
  'Disable the API client': 200,
  'Unlock the API client': 204,
  'Read the audit trail': 200,
  'Remove the API client': 204,
  'Get the removed API client': 404,
  'Log out': 204,
  'Refresh after logout': 401,
  'Log in with a wrong password': 401,
  'Log in without a password': 400,
  'Track without a token': 401,
  'Push the authorization request': 201,
  "Show the authorization page's address": 200,
  'Exchange the code': 200,
  'Track the shipment as the platform': 200,
  "Refresh the platform's tokens": 200,
  "Log in as the customer's administrator": 200,
  "List the customer's connections": 200,
  'End the connection': 204,
  'Refresh after the end': 400,
  'Revoke the refresh token': 200,
};

/** The folder that comes after the browser, which a run skips until `callbackUrl` is set, and its requests. */
const AFTER_THE_BROWSER = 'Act for the customer';
const AFTER_THE_BROWSER_REQUESTS = [
  'Exchange the code',
  'Track the shipment as the platform',
  "Refresh the platform's tokens",
  "Log in as the customer's administrator",
  "List the customer's connections",
  'End the connection',
  'Refresh after the end',
  'Revoke the refresh token',
];

/** The parts of newman's run summary this test reads (newman ships no types). */
interface NewmanSummary {
  readonly run: {
    readonly executions: readonly {
      readonly item: { readonly name: string };
      readonly request: { readonly method: string; readonly url: { getPath(): string } };
      readonly response?: {
        readonly code: number;
        readonly stream?: Buffer;
        readonly headers: { all(): readonly { readonly key: string; readonly value: string }[] };
      };
      readonly assertions?: readonly { readonly assertion: string }[];
    }[];
    readonly failures: readonly {
      readonly at: string;
      readonly error: { readonly message: string };
      readonly source?: { readonly name: string };
    }[];
  };
}
/** A run's events; `script` after every script, with the variable scopes as the script left them. */
interface NewmanRun {
  on(
    event: 'script',
    listener: (
      error: Error | null,
      args: {
        readonly execution: {
          readonly collectionVariables: { toObject(): Record<string, string> };
        };
      },
    ) => void,
  ): NewmanRun;
}
interface Newman {
  run(
    options: {
      readonly collection: string | object;
      readonly folder?: string;
      readonly environment: string;
      readonly envVar: readonly { readonly key: string; readonly value: string }[];
      readonly reporters: readonly string[];
      readonly timeoutRequest: number;
    },
    done: (error: Error | null, summary: NewmanSummary) => void,
  ): NewmanRun;
}
const newman: Newman = createRequire(import.meta.url)('newman');

/** The environment file's variables, as Postman imports them. */
const EnvironmentSchema = v.object({
  name: v.string(),
  values: v.array(v.object({ key: v.string(), value: v.string(), type: v.string(), enabled: v.boolean() })),
});

/** The collection's requests and their test scripts, as Postman imports them. */
interface CollectionItem {
  readonly name: string;
  readonly item?: readonly CollectionItem[];
  readonly event?: readonly {
    readonly listen: string;
    readonly script: { readonly exec: readonly string[] };
  }[];
}
const CollectionItemSchema: v.GenericSchema<CollectionItem> = v.object({
  name: v.string(),
  item: v.optional(v.array(v.lazy(() => CollectionItemSchema))),
  event: v.optional(
    v.array(v.object({ listen: v.string(), script: v.object({ exec: v.array(v.string()) }) })),
  ),
});
const CollectionSchema = v.object({
  info: v.object({ name: v.string(), schema: v.string() }),
  auth: v.unknown(),
  item: v.array(CollectionItemSchema),
  variable: v.array(v.looseObject({ key: v.string(), value: v.string() })),
});

const itemsNamed = (items: readonly CollectionItem[], name: string): CollectionItem[] =>
  items.flatMap((item) => (item.name === name ? [item] : itemsNamed(item.item ?? [], name)));

const requestsOf = (items: readonly CollectionItem[]): CollectionItem[] =>
  items.flatMap((item) => (item.item === undefined ? [item] : requestsOf(item.item)));

/** The demo login and API client the stack wrote to its data directory, as a person reads them there. */
const demoCredentials = async (stack: LocalStack): Promise<DemoData> =>
  JSON.parse(await readFile(demoCredentialsFile(stack.dataDir), 'utf8'));

describe('the Postman collection and environment as committed', () => {
  it('are a v2.1 collection with the access token as its Bearer auth, and an environment for npm start’s defaults', async () => {
    const collection = v.parse(CollectionSchema, JSON.parse(await readFile(COLLECTION, 'utf8')));
    const environment = v.parse(EnvironmentSchema, JSON.parse(await readFile(ENVIRONMENT, 'utf8')));
    const value = (key: string) => environment.values.find((variable) => variable.key === key);

    expect(collection.info.schema).toBe(
      'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
    );
    expect(collection.auth).toEqual({
      type: 'bearer',
      bearer: [{ key: 'token', value: '{{token}}', type: 'string' }],
    });
    expect(value('baseUrl')?.value).toBe(`http://127.0.0.1:${v.parse(LocalStackEnvSchema, {}).PORT}`);
    expect(value('username')?.value).toBe(DEMO_USERNAME);
    // Made per data directory (npm start prints them): the person or the runner sets them.
    for (const secret of ['password', 'clientSecret', 'platformClientSecret'])
      expect(value(secret)).toMatchObject({ value: '', type: 'secret' });
    expect(value('clientId')?.value).toBe('');
    expect(value('platformClientId')?.value).toBe('');
    // A loopback redirect URI, which the local stage alone registers, and nothing listens at.
    expect(value('redirectUri')?.value).toBe('http://127.0.0.1:8080/callback');
  });

  it('holds the requests after the browser in one folder, skipped until callbackUrl is set, and ships no variable’s value', async () => {
    const collection = v.parse(CollectionSchema, JSON.parse(await readFile(COLLECTION, 'utf8')));
    const [folder, ...others] = itemsNamed(collection.item, AFTER_THE_BROWSER);

    expect(others).toEqual([]);
    expect(requestsOf(folder?.item ?? []).map((request) => request.name)).toEqual(AFTER_THE_BROWSER_REQUESTS);
    const skip = folder?.event?.find((event) => event.listen === 'prerequest')?.script.exec.join('\n');
    expect(skip).toContain("if (!pm.variables.get('callbackUrl'))");
    expect(skip).toContain('pm.execution.skipRequest()');
    // Every collection variable starts empty: the runs store what they need, and nothing is shared.
    for (const variable of collection.variable) expect(variable.value, variable.key).toBe('');
  });

  it('checks, in every request’s test script, the status this test expects of it', async () => {
    const collection = v.parse(CollectionSchema, JSON.parse(await readFile(COLLECTION, 'utf8')));
    const requests = requestsOf(collection.item);

    expect(requests.map((request) => request.name)).toEqual(Object.keys(EXPECTED_STATUS));
    for (const request of requests) {
      const tests = request.event?.find((event) => event.listen === 'test')?.script.exec.join('\n') ?? '';
      expect(tests, request.name).toContain('pm.test(');
      expect(tests, request.name).toContain(`pm.response.to.have.status(${EXPECTED_STATUS[request.name]})`);
    }
  });
});

describe('the Postman collection run by newman against the local stack', () => {
  let stack: LocalStack;
  let demo: DemoData;
  let platform: { readonly clientId: string; readonly secret: string };

  beforeAll(async () => {
    stack = await startLocalStack();
    demo = await demoCredentials(stack);
    // As the README has the person register it: the environment's redirect URI, tracking:read.
    const environment = v.parse(EnvironmentSchema, JSON.parse(await readFile(ENVIRONMENT, 'utf8')));
    const redirectUri = environment.values.find((variable) => variable.key === 'redirectUri')?.value ?? '';
    const added = await stackAdmin(stack, [
      'platform',
      'add',
      'Postman example',
      '--redirect-uri',
      redirectUri,
      '--scope',
      'tracking:read',
    ]);
    platform = { clientId: printedValue(added, 'client id'), secret: printedValue(added, 'secret') };
  });
  afterAll(() => stack?.stop());

  /**
   * One run of the collection (the committed one, or one with the variables a run left) and the
   * committed environment, with what the README has a person set; the collection variables as
   * the run left them.
   */
  const run = (collection: string | object = COLLECTION, folder?: string) =>
    new Promise<{ summary: NewmanSummary; variables: Record<string, string> }>((done, fail) => {
      let variables: Record<string, string> = {};
      newman
        .run(
          {
            collection,
            ...(folder !== undefined && { folder }),
            environment: ENVIRONMENT,
            envVar: [
              { key: 'baseUrl', value: new URL(stack.baseUrl).origin },
              { key: 'password', value: demo.password },
              { key: 'clientId', value: demo.clientId },
              { key: 'clientSecret', value: demo.clientSecret },
              { key: 'platformClientId', value: platform.clientId },
              { key: 'platformClientSecret', value: platform.secret },
            ],
            reporters: [],
            timeoutRequest: 20_000,
          },
          (error, summary) => (error === null ? done({ summary, variables }) : fail(error)),
        )
        .on('script', (_error, { execution }) => {
          variables = execution.collectionVariables.toObject();
        });
    });

  /**
   * The person's browser on the authorization page (fetch with a cookie jar, redirects not
   * followed): opens `authorizationUrl`, signs in as the demo user, approves; the address it is
   * sent to. Each answer is held to docs/openapi.yaml but for its Set-Cookie, which the local stack's
   * serverless-offline rewrites (`Expires` added, the attributes reordered).
   */
  async function approveInBrowser(authorizationUrl: string): Promise<string> {
    const origin = new URL(stack.baseUrl).origin;
    let cookie: string | undefined;
    const go = async (url: string, form?: Record<string, string>) => {
      const response = await fetch(url, {
        method: form === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          ...(cookie !== undefined && { cookie }),
          ...(form !== undefined && { 'content-type': 'application/x-www-form-urlencoded', origin }),
        },
        ...(form !== undefined && { body: new URLSearchParams(form).toString() }),
      });
      const html = await response.text();
      const documented = new Headers(response.headers);
      documented.delete('set-cookie');
      assertDocumented({
        method: form === undefined ? 'GET' : 'POST',
        path: new URL(url).pathname,
        status: response.status,
        contentType: response.headers.get('content-type'),
        body: html === '' ? undefined : html,
        headers: documented,
      });
      cookie = response.headers.get('set-cookie')?.split(';')[0] ?? cookie;
      return { status: response.status, location: response.headers.get('location'), html };
    };
    const signIn = await go(authorizationUrl);
    expect(signIn.status).toBe(200);
    expect(signIn.html).toContain('Postman example');
    const request = /name="request" value="([^"]+)"/.exec(signIn.html)?.[1] ?? '';
    const page = new URL(authorizationUrl);
    const action = `${page.origin}${page.pathname}`;
    const consent = await go(action, {
      request,
      action: 'sign-in',
      username: demo.username,
      password: demo.password,
    });
    expect(consent.status).toBe(200);
    const approved = await go(action, { request, action: 'approve' });
    expect(approved.status).toBe(303);
    return approved.location ?? '';
  }

  /**
   * The collection as the README has a person run it: the whole of it (which skips the folder
   * after the browser), the browser, and then that folder, with what the first run stored and
   * `callbackUrl` pasted into the collection variables.
   */
  async function runAsAPersonDoes() {
    const first = await run();
    const callbackUrl = await approveInBrowser(first.variables.authorizationUrl ?? '');
    const committed: object = JSON.parse(await readFile(COLLECTION, 'utf8'));
    const stored: Record<string, string> = { ...first.variables, callbackUrl };
    const collection = {
      ...committed,
      variable: v
        .parse(CollectionSchema, committed)
        .variable.map((variable) => ({ ...variable, value: stored[variable.key] ?? '' })),
    };
    const second = await run(collection, AFTER_THE_BROWSER);
    return { beforeTheBrowser: outcome(first.summary), afterTheBrowser: outcome(second.summary) };
  }

  /** Every request's name, status and pm.test count; throws on a failure, naming it. */
  function outcome(summary: NewmanSummary) {
    const failures = summary.run.failures.map(
      ({ source, at, error }) => `${source?.name ?? '(collection)'} (${at}): ${error.message}`,
    );
    expect(failures).toEqual([]);
    return summary.run.executions.map(({ item, request, response, assertions }) => {
      const text = response?.stream?.toString('utf8') ?? '';
      let body: unknown = text === '' ? undefined : text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: the contract check sees the raw text.
      }
      const headers = new Headers(response?.headers.all().map(({ key, value }) => [key, value]) ?? []);
      assertDocumented({
        method: request.method,
        path: request.url.getPath(),
        status: response?.code ?? 0,
        contentType: headers.get('content-type'),
        body,
        headers,
      });
      return { name: item.name, status: response?.code, tests: assertions?.length ?? 0 };
    });
  }

  const expectedOf = (names: readonly string[]) =>
    names.map((name) => ({ name, status: EXPECTED_STATUS[name], tests: expect.any(Number) }));
  const expected = {
    beforeTheBrowser: expectedOf(
      Object.keys(EXPECTED_STATUS).filter((name) => !AFTER_THE_BROWSER_REQUESTS.includes(name)),
    ),
    afterTheBrowser: expectedOf(AFTER_THE_BROWSER_REQUESTS),
  };

  it('passes every pm.test, each request getting its status and an answer docs/openapi.yaml allows', async () => {
    const runs = await runAsAPersonDoes();

    expect(runs).toEqual(expected);
    for (const { name, tests } of [...runs.beforeTheBrowser, ...runs.afterTheBrowser])
      expect(tests, name).toBeGreaterThan(0);
  }, 90_000);

  it('passes again on a second run against the same stack: a failed login of the first run locks nobody, the platform connects again', async () => {
    expect(await runAsAPersonDoes()).toEqual(expected);
  }, 90_000);
});
