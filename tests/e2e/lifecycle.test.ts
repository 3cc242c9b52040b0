/** `npm start` as an operator lives with it: data survives a restart, a signal frees every port. */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { bearer, send } from '../support/http.ts';

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

let dataDir: string | undefined;
let running: LocalStack | undefined;
afterAll(async () => {
  await running?.stop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('local stack lifecycle', () => {
  it('keeps users and the signing key across a restart, and frees its ports on SIGTERM', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'parcel-auth-restart-'));
    running = await startLocalStack({ dataDir });
    const first = running;
    const login = await send(first, 'POST', '/login', { body: first.demo });
    expect(login.status).toBe(200);
    expect((await stat(join(dataDir, 'keys', 'signing-keyring.json'))).mode & 0o777).toBe(0o600);

    await first.stop();
    running = undefined;
    for (const port of Object.values(first.ports)) expect(await listening(port)).toBe(false);

    // On the same PORT, as npm start restarts: the issuer is the stack's own origin, so tokens
    // issued before a restart on another port are another issuer's.
    running = await startLocalStack({ dataDir, env: { PORT: String(first.ports.http) } });
    expect(running.demo).toEqual(first.demo);
    expect((await send(running, 'POST', '/login', { body: first.demo })).status).toBe(200);
    // Same key after the restart: the token issued before it still passes the authorizer.
    const tracked = await send(running, 'GET', '/tracking/12345678901234', {
      headers: bearer(login.json.token),
    });
    expect(tracked.status).toBe(404);
  });
});
