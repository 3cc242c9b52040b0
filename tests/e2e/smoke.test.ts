/**
 * `npm run smoke` as an operator runs it after a deployment: the real script in a child
 * process, credentials in its environment, against the local stack (and, for the failure
 * reports, against a closed port and a server that is not the service).
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { tamperSignature } from '../../ops/smoke/jwt.ts';
import { clean } from '../../ops/smoke/report.ts';
import { freePort } from '../support/ports.ts';
import { runScript, type ScriptRun } from '../support/run-script.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const USERNAME = 'smoke-user';
const PASSWORD = 'a-smoke-test-password-Q7v';
const WRONG_PASSWORD = 'not-the-smoke-password-K2x';
const CHECK_LINE = /^(pass|FAIL|skip) +(\d) (.+?) +(\d{3}|-) +(\d+ ms|-) {2}(.*)$/;

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
  const accounts = stackAccounts(stack);
  await accounts.addPickupAddress('SMOKE-CUSTOMER', '');
  await accounts.addPickupAddress('SMOKE-CUSTOMER', 'SMK01');
  await accounts.createUser({
    username: USERNAME,
    passwordHash: await hashPassword(PASSWORD, 4),
    customerId: 'SMOKE-CUSTOMER',
  });
});
afterAll(() => stack?.stop());

interface Run extends ScriptRun {
  /** The check lines of stdout, parsed. */
  readonly checks: { verdict: string; name: string; status: string; ms: string; detail: string }[];
}

/** Runs ops/smoke.ts as `npm run smoke -- <args>` would, with only the given SMOKE_ variables. */
async function smoke(args: string[], credentials: Record<string, string> = {}): Promise<Run> {
  const { SMOKE_USERNAME: _u, SMOKE_PASSWORD: _p, ...env } = process.env;
  const run = await runScript('ops/smoke.ts', args, { env: { ...env, ...credentials } });
  const checks = run.stdout
    .split('\n')
    .map((line) => CHECK_LINE.exec(line))
    .filter((match) => match !== null)
    .map(([, verdict = '', , name = '', status = '', ms = '', detail = '']) => ({
      verdict,
      name,
      status,
      ms,
      detail,
    }));
  return { ...run, checks };
}

const origin = () => new URL(stack.baseUrl).origin;
const smokeUser = { SMOKE_USERNAME: USERNAME, SMOKE_PASSWORD: PASSWORD };
const CHECK_NAMES = [
  'login',
  'login-extended',
  'access token allowed',
  'refresh token refused',
  'tampered token refused',
];

describe('npm run smoke against the local stack', () => {
  it('passes all five checks, one line each with status and duration, and exits 0', async () => {
    const run = await smoke(['--base-url', `${origin()}/`], smokeUser);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.checks.map((check) => check.name)).toEqual(CHECK_NAMES);
    expect(run.checks.map((check) => check.verdict)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass']);
    expect(run.checks.map((check) => check.status)).toEqual(['200', '200', '404', '401', '401']);
    for (const check of run.checks) expect(check.ms).toMatch(/^\d+ ms$/);
    expect(run.checks[1]?.detail).toContain('"SMK01"');
    expect(run.stdout).toMatch(/^smoke: all 5 checks passed$/m);
    expect(run.stdout).not.toContain(PASSWORD);
    expect(run.stdout).not.toContain('eyJ');
  });

  it('takes a base URL that already ends in /api/v1', async () => {
    const run = await smoke([`--base-url=${stack.baseUrl}/`], smokeUser);
    expect(run.code).toBe(0);
    expect(run.checks.map((check) => check.verdict)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass']);
  });

  it('with a wrong password: fails login, logs in no further, never prints the password, exits 1', async () => {
    const run = await smoke(['--base-url', origin()], { ...smokeUser, SMOKE_PASSWORD: WRONG_PASSWORD });

    expect(run.code).toBe(1);
    expect(run.checks.map((check) => [check.verdict, check.status])).toEqual([
      ['FAIL', '401'],
      ['skip', '-'],
      ['skip', '-'],
      ['skip', '-'],
      ['skip', '-'],
    ]);
    expect(run.checks[0]?.detail).toContain('invalid-credentials');
    for (const output of [run.stdout, run.stderr]) {
      expect(output).not.toContain(WRONG_PASSWORD);
      expect(output).not.toContain(PASSWORD);
    }
    // One failed attempt counted against the user, not two: login-extended was not tried.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'ops/admin.ts'), 'user', 'show', USERNAME],
      {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: stack.dataDir, DYNAMODB_PORT: String(stack.ports.dynamodb) },
      },
    );
    expect(JSON.parse(stdout).failedLogins.failures).toBe(1);
  });
});

describe('npm run smoke: usage', () => {
  it('without --base-url: a usage message on stderr and exit 2', async () => {
    const run = await smoke([], smokeUser);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error: --base-url is required');
    expect(run.stderr).toContain('Usage: npm run smoke -- --base-url <url>');
    expect(run.stderr).not.toContain(PASSWORD);
  });

  it('refuses credentials in arguments and never echoes them, exit 2', async () => {
    for (const args of [
      ['--base-url', origin(), `--password=${PASSWORD}`],
      ['--base-url', origin(), PASSWORD],
      ['--base-url', `http://${USERNAME}:${PASSWORD}@127.0.0.1:1/`],
    ]) {
      const run = await smoke(args, smokeUser);
      expect(run.code).toBe(2);
      expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
    }
  });

  it('refuses plain http to a host that is not loopback unless told, before sending anything', async () => {
    const refused = await smoke(['--base-url', 'http://smoke.invalid'], smokeUser);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('would send the password unencrypted');
    expect(refused.stdout).toBe('');
    // Allowed, it warns and goes on (to a network error: .invalid never resolves).
    const allowed = await smoke(
      ['--base-url', 'http://smoke.invalid', '--allow-insecure-http', '--timeout', '2'],
      smokeUser,
    );
    expect(allowed.code).toBe(1);
    expect(allowed.stderr).toContain('warning: plain http');
    expect(`${allowed.stdout}${allowed.stderr}`).not.toContain(PASSWORD);
  });

  it('without SMOKE_PASSWORD: names the variable, exit 2', async () => {
    const run = await smoke(['--base-url', origin()], { SMOKE_USERNAME: USERNAME });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('set SMOKE_PASSWORD in the environment');
  });

  it('--help documents the environment variables and what the run does not do, exit 0', async () => {
    const run = await smoke(['--help']);
    expect(run.code).toBe(0);
    for (const text of ['SMOKE_USERNAME', 'SMOKE_PASSWORD', 'wrong password', 'expire on their own']) {
      expect(run.stdout).toContain(text);
    }
  });
});

describe('npm run smoke: failures it reports as failed checks', () => {
  let server: Server;
  let serverUrl: string;
  beforeAll(async () => {
    // Not the service: login answers an HTML page, login-extended never answers.
    server = createServer((request, response) => {
      if (request.url === '/api/v1/login') {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>Down for maintenance</html>');
      }
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  it('a closed port: a network error with its message, exit 1', async () => {
    const run = await smoke(['--base-url', `http://127.0.0.1:${await freePort()}`], smokeUser);
    expect(run.code).toBe(1);
    expect(run.checks[0]).toMatchObject({ verdict: 'FAIL', status: '-' });
    expect(run.checks[0]?.detail).toMatch(/^network error: .*ECONNREFUSED/);
    expect(run.checks.slice(2).map((check) => check.verdict)).toEqual(['skip', 'skip', 'skip']);
  });

  it('an answer that is not JSON, and one that never comes within --timeout', async () => {
    const run = await smoke(['--base-url', serverUrl, '--timeout', '0.5'], smokeUser);
    expect(run.code).toBe(1);
    expect(run.checks[0]).toMatchObject({ verdict: 'FAIL', status: '200' });
    expect(run.checks[0]?.detail).toContain('the answer is not JSON (text/html;');
    expect(run.checks[1]).toMatchObject({ verdict: 'FAIL', status: '-' });
    expect(run.checks[1]?.detail).toBe('no answer within 500 ms (timeout)');
  });
});

describe('npm run smoke: what it sends and prints', () => {
  it('tampers with a signature so that it decodes to other bytes, still base64url of the same length', () => {
    for (const first of ['A', 'B', 'z', '_']) {
      const signature = `${first}${'Qx-9'.repeat(21)}A`;
      const [header, payload, tampered = ''] = String(
        tamperSignature(`eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.${signature}`),
      ).split('.');
      expect([header, payload]).toEqual(['eyJhbGciOiJFZERTQSJ9', 'eyJzdWIiOiJ4In0']);
      expect(tampered).toMatch(/^[A-Za-z0-9_-]{86}$/);
      expect(Buffer.from(tampered, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(false);
    }
  });

  it('masks the password and anything shaped like a JWT in a reason, but not a host name', () => {
    const reason = `getaddrinfo ENOTFOUND abcdefgh12.execute-api.eu-central-1.amazonaws.com ${PASSWORD} eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln\u001b[2J`;
    expect(clean(reason, [PASSWORD])).toBe(
      'getaddrinfo ENOTFOUND abcdefgh12.execute-api.eu-central-1.amazonaws.com [REDACTED] [JWT]\\u001b[2J',
    );
  });
});
