/**
 * What the service logs, end to end: a whole session over HTTP against the local stack at
 * LOG_LEVEL=debug, then everything serverless-offline and the functions printed is searched
 * for the passwords, tokens and private keys that went through it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { type Answer, bearer, send } from '../support/http.ts';
import { emfLines, summarise } from '../support/metrics-capture.ts';

const WRONG_PASSWORD = 'a-wrong-password-for-the-log-test';

/** Every value of a `d` member (a JWK's private key) anywhere in a JSON document. */
function privateKeyValues(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(privateKeyValues);
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'd' && typeof value === 'string' ? [value] : privateKeyValues(value),
  );
}

/** The service's JSON log lines among everything the stack printed (its metric lines left out). */
function serviceLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    const start = line.indexOf('{"');
    if (start === -1) return [];
    try {
      const parsed = JSON.parse(line.slice(start)) as Record<string, unknown>;
      return parsed.service === 'parcel-auth' && !('_aws' in parsed) ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

const EXPECTED_EVENTS = [
  'login succeeded',
  'login failed',
  'authorizer denied',
  'refresh refused',
  'refresh token reuse: session revoked',
];

/** The metrics the session below counts, one EMF line each (lib/metrics/powertools.ts). */
const EXPECTED_METRICS = [
  'LoginSucceeded=1',
  'LoginSucceeded=1',
  'LoginFailed{reason=BadPassword}=1',
  'AuthorizerAllow=1',
  'AuthorizerAllow=1',
  'AuthorizerDeny{reason=InvalidToken}=1',
  'AuthorizerDeny{reason=InvalidToken}=1',
  'Refresh=1',
  'Refresh=1',
  'RefreshReuseDetected=1',
  'Logout=1',
  'Logout=1',
];
const metricsOf = (output: string) => emfLines(output).flatMap(summarise);
const containsAll = (found: readonly string[], expected: readonly string[]) => {
  const left = [...found];
  return expected.every((item) => {
    const at = left.indexOf(item);
    if (at !== -1) left.splice(at, 1);
    return at !== -1;
  });
};

let stack: LocalStack;
let output = '';
let privateKeys: string[] = [];
const tokens: string[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ env: { LOG_LEVEL: 'debug' } });
  const { demo } = stack;
  const expectStatus = (answer: Answer, status: number) => {
    expect(answer.status, answer.text).toBe(status);
    return answer.json;
  };
  const keep = (body: Record<string, unknown>) => {
    for (const key of ['token', 'refreshToken']) if (typeof body[key] === 'string') tokens.push(body[key]);
    return body;
  };

  const first = keep(expectStatus(await send(stack, 'POST', '/login', { body: demo }), 200));
  const extended = keep(expectStatus(await send(stack, 'POST', '/login-extended', { body: demo }), 200));
  const wrong = { username: demo.username, password: WRONG_PASSWORD };
  expectStatus(await send(stack, 'POST', '/login', { body: wrong }), 401);

  const shipment = { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.5 }] };
  const created = expectStatus(
    await send(stack, 'POST', '/shipments', { body: shipment, headers: bearer(first.token) }),
    201,
  );
  expectStatus(
    await send(stack, 'GET', `/tracking/${created.parcelNumber}`, { headers: bearer(first.token) }),
    200,
  );
  // Denied by the authorizer: a refresh token and a tampered access token as Bearer credentials.
  expectStatus(await send(stack, 'GET', '/tracking/1', { headers: bearer(first.refreshToken) }), 401);
  expectStatus(await send(stack, 'GET', '/tracking/1', { headers: bearer(`${first.token}x`) }), 401);

  const refreshed = keep(
    expectStatus(
      await send(stack, 'POST', '/token/refresh', { body: { refreshToken: first.refreshToken } }),
      200,
    ),
  );
  const refreshedAgain = keep(
    expectStatus(
      await send(stack, 'POST', '/token/refresh', { body: { refreshToken: refreshed.refreshToken } }),
      200,
    ),
  );
  // The token spent two refreshes ago (the grace window covers only the last one): reuse,
  // which revokes the session.
  expectStatus(
    await send(stack, 'POST', '/token/refresh', { body: { refreshToken: first.refreshToken } }),
    401,
  );
  expectStatus(
    await send(stack, 'POST', '/logout', { body: { refreshToken: refreshedAgain.refreshToken } }),
    204,
  );
  expectStatus(await send(stack, 'POST', '/logout', { body: { refreshToken: extended.refreshToken } }), 204);

  privateKeys = privateKeyValues(
    JSON.parse(await readFile(join(stack.dataDir, 'keys', 'signing-keyring.json'), 'utf8')),
  );
  // The functions print from worker threads: wait until the last expected lines arrived, then
  // stop the stack so nothing it prints later is missed.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const events = new Set(serviceLines(stack.output()).map((line) => line.event));
    const metricsArrived = containsAll(metricsOf(stack.output()), EXPECTED_METRICS);
    if (EXPECTED_EVENTS.every((event) => events.has(event)) && metricsArrived) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stack.stop();
  output = stack.output();
});
afterAll(() => stack?.stop());

describe('logs of a whole session at LOG_LEVEL=debug', () => {
  it('contain the events operators need, as JSON lines with the request id', () => {
    const lines = serviceLines(output);
    for (const event of EXPECTED_EVENTS) expect(lines.map((line) => line.event)).toContain(event);
    for (const line of lines) {
      expect(line).toMatchObject({
        level: expect.any(String),
        message: line.event,
        timestamp: expect.any(String),
        function_request_id: expect.stringMatching(/\S/),
      });
    }
  });

  it('never contain a password that was sent', () => {
    // dev/start.ts shows the developer the local demo login once, before the API starts;
    // that line is not a log of the service.
    const { username, password } = stack.demo;
    const printed = output.replace(`Demo login: username "${username}", password "${password}"`, '');
    expect(printed).not.toContain(password);
    expect(output).not.toContain(WRONG_PASSWORD);
  });

  it('never contain an access or refresh token, whole or its signature', () => {
    expect(tokens).toHaveLength(8);
    for (const token of tokens) {
      const signature = token.split('.')[2] ?? '';
      expect(signature.length).toBeGreaterThan(40);
      expect(output).not.toContain(token);
      expect(output).not.toContain(signature);
    }
  });

  it('never contain private key material', () => {
    expect(privateKeys.length).toBeGreaterThan(0);
    for (const d of privateKeys) expect(output).not.toContain(d);
  });
});

describe('metrics of the same session', () => {
  it('are printed as EMF lines in the parcel-auth namespace, one per invocation and dimension set', () => {
    const lines = emfLines(output);
    const found = lines.flatMap(summarise);
    expect(containsAll(found, EXPECTED_METRICS), found.join('\n')).toBe(true);
    for (const line of lines) {
      expect(line).toMatchObject({ service: 'parcel-auth', stage: 'local' });
      expect(line._aws.CloudWatchMetrics.map((directive) => directive.Namespace)).toEqual(['parcel-auth']);
    }
  });

  it('name neither the user nor the address', () => {
    const text = JSON.stringify(emfLines(output));
    expect(text).not.toContain(`"${stack.demo.username}"`);
    expect(text).not.toContain('127.0.0.1');
  });
});
