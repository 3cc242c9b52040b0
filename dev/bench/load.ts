/**
 * The local stack under load: `npm start`'s serverless-offline (API Gateway emulation, the
 * real authorizer in front of the real handlers) on loopback, driven by autocannon for a
 * bounded time per route. Beside each route, the work its function must do, timed
 * in-process in the same run (a bcrypt compare at the local stage's cost for a login, a
 * jose verify of the same token for a protected call): the rest of the latency is the
 * local stack's own overhead (serverless-offline, its Lambda emulation, HTTP on loopback)
 * and queueing, not the service's code.
 *
 * autocannon, the stack and its embedded DynamoDB share the machine's cores, so these
 * numbers describe the local stack, not Lambda.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import bcrypt from 'bcryptjs';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { stackAccounts, startLocalStack } from '../local/stack.ts';
import { median } from './measure.ts';
import type { LoadResult, LoadRoute } from './results.ts';

const timed = async (times: number, run: () => Promise<unknown>) => {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return median(samples);
};

async function drive(options: {
  route: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  expectStatus: number;
  connections: number;
  seconds: number;
}): Promise<Omit<LoadRoute, 'workMs' | 'workLabel'>> {
  const result = await autocannon({
    url: options.url,
    method: options.method,
    headers: options.headers,
    ...(options.body !== undefined && { body: options.body }),
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
  });
  const expected = result.statusCodeStats?.[String(options.expectStatus) as '200']?.count ?? 0;
  const requests = result.requests.total;
  return {
    route: options.route,
    connections: options.connections,
    seconds: result.duration,
    requests,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    // autocannon counts timeouts among its errors; an answer of another status is one too.
    errors: result.errors + (requests - expected),
  };
}

export async function loadPart(options: { seconds: number }): Promise<LoadResult> {
  // Production-like brute-force limits: the login route logs in one user with fewer
  // parallel connections than its failure limit, as attempts are reserved before bcrypt.
  const stack = await startLocalStack();
  try {
    const { username, password } = stack.demo;
    const credentials = JSON.stringify({ username, password });
    const json = { 'content-type': 'application/json' };
    const login = await fetch(`${stack.baseUrl}/login`, { method: 'POST', headers: json, body: credentials });
    const { token } = (await login.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    const created = await fetch(`${stack.baseUrl}/shipments`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.25 }] }),
    });
    const { parcelNumber } = (await created.json()) as { parcelNumber: string };
    if (created.status !== 201) throw new Error(`could not create a shipment: ${created.status}`);

    // The function's own work, timed here on the same inputs.
    const origin = new URL(stack.baseUrl).origin;
    const jwks = createRemoteJWKSet(new URL(`${origin}/.well-known/jwks.json`));
    await jwtVerify(token, jwks);
    const verifyMs = await timed(200, () => jwtVerify(token, jwks));
    const hash = (await stackAccounts(stack).findByUsername(username))?.passwordHash;
    if (hash === undefined) throw new Error('no demo user');
    const compareMs = await timed(20, () => bcrypt.compare(password, hash));

    // serverless-offline starts an emulated Lambda per concurrent request: a discarded warm-up
    // at the same concurrency, so the timed run measures warm containers.
    const warmUp = async (url: string, init: RequestInit, connections: number) => {
      for (let round = 0; round < 2; round++) {
        await Promise.all(
          Array.from({ length: connections }, () => fetch(url, init).then((answer) => answer.arrayBuffer())),
        );
      }
    };
    await warmUp(`${stack.baseUrl}/tracking/${parcelNumber}`, { headers: auth }, 10);
    await warmUp(`${stack.baseUrl}/login`, { method: 'POST', headers: json, body: credentials }, 4);

    const routes: LoadRoute[] = [];
    routes.push({
      ...(await drive({
        route: 'GET /api/v1/tracking/{parcelNumber} (authorizer + handler)',
        url: `${stack.baseUrl}/tracking/${parcelNumber}`,
        method: 'GET',
        headers: auth,
        expectStatus: 200,
        connections: 10,
        seconds: options.seconds,
      })),
      workMs: verifyMs,
      workLabel: 'jose jwtVerify of the token',
    });
    routes.push({
      ...(await drive({
        route: 'POST /api/v1/login',
        url: `${stack.baseUrl}/login`,
        method: 'POST',
        headers: json,
        body: credentials,
        expectStatus: 200,
        connections: 4,
        seconds: options.seconds,
      })),
      workMs: compareMs,
      workLabel: `bcrypt compare, cost ${bcrypt.getRounds(hash)}`,
    });
    return { part: 'load', routes };
  } finally {
    await stack.stop();
  }
}
