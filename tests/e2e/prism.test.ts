/**
 * docs/openapi.yaml as an independent validator reads it: Stoplight Prism in proxy mode in
 * front of the local stack checks every request and answer of the README's curl flow and of
 * its error cases against the document (#28). Two proxies: with `--errors`, Prism answers a
 * violation itself with an error instead of the stack's answer; the error cases whose requests
 * the document itself refuses go through one without it, which passes everything on. Both
 * report what they found in the `sl-violations` header.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CUSTOMER } from '../../dev/local/seed.ts';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { freePort } from '../support/ports.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SHIPMENT = { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.5 }] };

/** One entry of Prism's `sl-violations` header. */
interface Violation {
  readonly location: readonly (string | number)[];
  readonly severity: string;
  readonly code: string | number;
  readonly message: string;
}

interface Proxied {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
  readonly violations: readonly Violation[];
}

interface Prism {
  readonly origin: string;
  stop(): Promise<void>;
}

/** `prism proxy docs/openapi.yaml <upstream>` on a free port of 127.0.0.1, once it listens. */
async function startPrism(upstream: string, flags: readonly string[]): Promise<Prism> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(ROOT, 'node_modules/.bin/prism'),
      'proxy',
      join(ROOT, 'docs/openapi.yaml'),
      upstream,
      ...['--host', '127.0.0.1', '--port', String(port), ...flags],
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } },
  );
  let output = '';
  const listening = new Promise<string>((resolveListening, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const address = /Prism is listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (address !== undefined) resolveListening(address);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`prism exited with ${code} before listening:\n${output}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    return { origin: await listening, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Sends a request through `prism` and reads the answer and what Prism found wrong with it. */
async function through(
  prism: Prism,
  method: string,
  path: string,
  options: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Proxied> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(`${prism.origin}${path}`, {
    method,
    headers,
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  const header = response.headers.get('sl-violations');
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text === '' ? {} : JSON.parse(text),
    // A header longer than 8 kB is cut and prefixed "Too many violations!": not JSON, and a failure.
    violations: header === null ? [] : header.startsWith('[') ? JSON.parse(header) : [{ message: header }],
  };
}

const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });
const basic = (clientId: string, clientSecret: string) => ({
  // RFC 6749 section 2.3.1: each form-urlencoded first (ids and secrets are URL-safe already).
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
});

const JSON_TYPE = 'application/json';
const PROBLEM = 'application/problem+json';

/**
 * The answer's status and media type, or no body at all. Prism compares media types without
 * their `+json` suffix, so it takes problem+json where the document says application/json and
 * the reverse: the media type is held here.
 */
function expectAnswer(answer: Proxied, status: number, mediaType: string | undefined) {
  expect(answer.status).toBe(status);
  if (mediaType === undefined) expect(answer.text).toBe('');
  else expect(answer.headers.get('content-type')?.split(';')[0]).toBe(mediaType);
}

/** Passed on by the `--errors` proxy as the stack answered it, and no violation at all, not even a warning. */
function expectConforming(answer: Proxied, status: number, mediaType: string | undefined) {
  expect(answer.violations).toEqual([]);
  expectAnswer(answer, status, mediaType);
}

/**
 * An answer to a request the document refuses: Prism reports exactly that request violation,
 * and none of the answer, which the stack gave.
 */
function expectOnlyRequestViolation(
  answer: Proxied,
  status: number,
  mediaType: string,
  violation: Partial<Violation>,
) {
  expect(answer.violations).toEqual([expect.objectContaining({ severity: 'Error', ...violation })]);
  expectAnswer(answer, status, mediaType);
}

let stack: LocalStack;
/** With `--errors`: a violation in a request or an answer becomes Prism's error answer. */
let strict: Prism;
/** Without: passes every request on, violations or not, and only reports them. */
let reporting: Prism;

/** The admin CLI against this stack, as `npm run admin -- …` runs it: its stdout. */
const admin = (args: readonly string[]) => stackAdmin(stack, args);

beforeAll(async () => {
  stack = await startLocalStack();
  const upstream = new URL(stack.baseUrl).origin;
  [strict, reporting] = await Promise.all([startPrism(upstream, ['--errors']), startPrism(upstream, [])]);
});
afterAll(async () => {
  await Promise.all([strict?.stop(), reporting?.stop()]);
  await stack?.stop();
});

// The flow's state, in the README's order: its error cases use the token, parcel and client.
let token: string;
let parcelNumber: string;
let client: { id: string; secret: string };

describe('the README’s flow through Prism with --errors: no violation', () => {
  it('login (200)', async () => {
    const answer = await through(strict, 'POST', '/api/v1/login', { json: stack.demo });
    expectConforming(answer, 200, JSON_TYPE);
    token = String(answer.json.token);
  });

  it('login-extended (200)', async () => {
    const answer = await through(strict, 'POST', '/api/v1/login-extended', { json: stack.demo });
    expectConforming(answer, 200, JSON_TYPE);
    expect(answer.json.depotCode).toBe('PRG01');
  });

  it('a shipment created (201) and tracked (200)', async () => {
    const created = await through(strict, 'POST', '/api/v1/shipments', {
      json: SHIPMENT,
      headers: bearer(token),
    });
    expectConforming(created, 201, JSON_TYPE);
    parcelNumber = String(created.json.parcelNumber);

    const tracked = await through(strict, 'GET', `/api/v1/tracking/${parcelNumber}`, {
      headers: bearer(token),
    });
    expectConforming(tracked, 200, JSON_TYPE);
    expect(tracked.json.shipment).toEqual(SHIPMENT);
  });

  it('refresh twice (200), then the refresh token spent two refreshes ago reused (401), then logout (204)', async () => {
    // A login of its own, as in the README: the reuse revokes the whole session, its access token too.
    // Two refreshes, as the token spent only by the last one is a retry within the grace window.
    const login = await through(strict, 'POST', '/api/v1/login', { json: stack.demo });
    expectConforming(login, 200, JSON_TYPE);
    const refreshToken = String(login.json.refreshToken);

    const refreshed = await through(strict, 'POST', '/api/v1/token/refresh', { json: { refreshToken } });
    expectConforming(refreshed, 200, JSON_TYPE);
    const again = await through(strict, 'POST', '/api/v1/token/refresh', {
      json: { refreshToken: String(refreshed.json.refreshToken) },
    });
    expectConforming(again, 200, JSON_TYPE);

    const reused = await through(strict, 'POST', '/api/v1/token/refresh', { json: { refreshToken } });
    expectConforming(reused, 401, PROBLEM);
    expect(reused.json.type).toBe('urn:parcel-auth:problem:invalid-credentials');

    expectConforming(
      await through(strict, 'POST', '/api/v1/logout', { json: { refreshToken } }),
      204,
      undefined,
    );
  });

  it('the public keys (200) and the authorization server metadata (200)', async () => {
    expectConforming(await through(strict, 'GET', '/.well-known/jwks.json'), 200, JSON_TYPE);
    expectConforming(await through(strict, 'GET', '/.well-known/oauth-authorization-server'), 200, JSON_TYPE);
  });

  it('a client credentials grant (200) for a client made with the admin CLI, and tracking with its token (200)', async () => {
    const stdout = await admin([
      'client',
      'add',
      DEMO_CUSTOMER,
      '--scope',
      'tracking:read',
      '--scope',
      'shipments:write',
    ]);
    client = { id: printedValue(stdout, 'client id'), secret: printedValue(stdout, 'secret') };

    const granted = await through(strict, 'POST', '/api/v1/oauth/token', {
      form: { grant_type: 'client_credentials' },
      headers: basic(client.id, client.secret),
    });
    expectConforming(granted, 200, JSON_TYPE);
    expect(granted.json.scope).toBe('tracking:read shipments:write');

    const tracked = await through(strict, 'GET', `/api/v1/tracking/${parcelNumber}`, {
      headers: bearer(granted.json.access_token),
    });
    expectConforming(tracked, 200, JSON_TYPE);
  });
});

describe('the README’s error cases through Prism with --errors: no violation', () => {
  it('a wrong password (401)', async () => {
    const answer = await through(strict, 'POST', '/api/v1/login', {
      json: { ...stack.demo, password: 'wrong-password' },
    });
    expectConforming(answer, 401, PROBLEM);
    expect(answer.json.type).toBe('urn:parcel-auth:problem:invalid-credentials');
  });

  it('an invalid token (401)', async () => {
    const answer = await through(strict, 'GET', `/api/v1/tracking/${parcelNumber}`, {
      headers: bearer('expired-or-tampered'),
    });
    expectConforming(answer, 401, PROBLEM);
    expect(answer.json.type).toBe('urn:parcel-auth:problem:unauthorized');
  });

  it('a token without the route’s scope (403)', async () => {
    const granted = await through(strict, 'POST', '/api/v1/oauth/token', {
      form: { grant_type: 'client_credentials', scope: 'tracking:read' },
      headers: basic(client.id, client.secret),
    });
    expectConforming(granted, 200, JSON_TYPE);

    const refused = await through(strict, 'POST', '/api/v1/shipments', {
      json: SHIPMENT,
      headers: bearer(granted.json.access_token),
    });
    expectConforming(refused, 403, PROBLEM);
    expect(refused.json.type).toBe('urn:parcel-auth:problem:insufficient-scope');
  });

  it('an unknown parcel (404)', async () => {
    const answer = await through(strict, 'GET', '/api/v1/tracking/00000000000000', {
      headers: bearer(token),
    });
    expectConforming(answer, 404, PROBLEM);
    expect(answer.json.type).toBe('urn:parcel-auth:problem:not-found');
  });

  it('the token endpoint’s invalid_client (401)', async () => {
    const answer = await through(strict, 'POST', '/api/v1/oauth/token', {
      form: { grant_type: 'client_credentials' },
      headers: basic(client.id, `${client.secret}x`),
    });
    expectConforming(answer, 401, JSON_TYPE);
    expect(answer.json.error).toBe('invalid_client');
  });
});

describe('error cases whose requests the document refuses, through Prism without --errors: that request violation only', () => {
  it('a validation error (400)', async () => {
    const answer = await through(reporting, 'POST', '/api/v1/login', { json: { username: 'demo' } });
    expectOnlyRequestViolation(answer, 400, PROBLEM, { location: ['request', 'body'], code: 'required' });
    expect(answer.json.type).toBe('urn:parcel-auth:problem:validation-failed');
  });

  it('no token (401)', async () => {
    const answer = await through(reporting, 'GET', `/api/v1/tracking/${parcelNumber}`);
    expectOnlyRequestViolation(answer, 401, PROBLEM, { location: ['request'], code: 401 });
    expect(answer.json.type).toBe('urn:parcel-auth:problem:unauthorized');
  });

  it('the token endpoint’s unsupported_grant_type (400)', async () => {
    const answer = await through(reporting, 'POST', '/api/v1/oauth/token', {
      form: { grant_type: 'password', username: 'demo', password: 'whatever' },
      headers: basic(client.id, client.secret),
    });
    expectOnlyRequestViolation(answer, 400, JSON_TYPE, {
      location: ['request', 'body', 'grant_type'],
      code: 'enum',
    });
    expect(answer.json.error).toBe('unsupported_grant_type');
  });
});
