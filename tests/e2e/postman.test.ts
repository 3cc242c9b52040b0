/**
 * The Postman collection integrators start from (integrators/postman/), run as shipped by
 * newman's Node API against the local stack started as `npm start` does: the committed
 * environment, with only what its README has a person fill in set on top: the stack's address,
 * and the demo password and the demo API client's id and secret, which `npm start` prints and
 * keeps in the data directory's demo-credentials.json (the demo user administers the demo
 * customer from the first start, for the Administrator folder). No pm.test fails, every
 * request gets its status, and every answer is held to docs/openapi.yaml. It runs twice
 * against the same stack, as an integrator runs it again and again.
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
};

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
interface Newman {
  run(
    options: {
      readonly collection: string;
      readonly environment: string;
      readonly envVar: readonly { readonly key: string; readonly value: string }[];
      readonly reporters: readonly string[];
      readonly timeoutRequest: number;
    },
    done: (error: Error | null, summary: NewmanSummary) => void,
  ): unknown;
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
});

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
    for (const secret of ['password', 'clientSecret'])
      expect(value(secret)).toMatchObject({ value: '', type: 'secret' });
    expect(value('clientId')?.value).toBe('');
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

  beforeAll(async () => {
    stack = await startLocalStack();
    demo = await demoCredentials(stack);
  });
  afterAll(() => stack?.stop());

  /** One run of the committed collection and environment, with what the README has a person set. */
  const run = () =>
    new Promise<NewmanSummary>((done, fail) => {
      newman.run(
        {
          collection: COLLECTION,
          environment: ENVIRONMENT,
          envVar: [
            { key: 'baseUrl', value: new URL(stack.baseUrl).origin },
            { key: 'password', value: demo.password },
            { key: 'clientId', value: demo.clientId },
            { key: 'clientSecret', value: demo.clientSecret },
          ],
          reporters: [],
          timeoutRequest: 20_000,
        },
        (error, summary) => (error === null ? done(summary) : fail(error)),
      );
    });

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

  const expected = Object.entries(EXPECTED_STATUS).map(([name, status]) => ({
    name,
    status,
    tests: expect.any(Number),
  }));

  it('passes every pm.test, each request getting its status and an answer docs/openapi.yaml allows', async () => {
    const requests = outcome(await run());

    expect(requests).toEqual(expected);
    for (const { name, tests } of requests) expect(tests, name).toBeGreaterThan(0);
  }, 60_000);

  it('passes again on a second run against the same stack: a failed login of the first run locks nobody', async () => {
    expect(outcome(await run())).toEqual(expected);
  }, 60_000);
});
