/**
 * A username must never read as an API client's principal in the access log (`client:<id>`):
 * every edge that creates users refuses a colon, and a login with such a name gets the
 * answer of any unknown user. The rule: lib/accounts/repository.ts, UsernameSchema.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../../dev/local/handler-env.ts';
import { tableNames } from '../../../lib/stage.ts';
import { lambdaContext, loginEvent } from '../../fixtures/events.ts';
import { unique, useAdminCli } from '../../support/admin-cli.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const cli = useAdminCli();
const NO_COLON = 'must not contain a colon (the access log names API clients client:<id>)';
const PASSWORD = 'a-long-test-password';

let dir: string;
let cleanupKeys: (() => Promise<void>) | undefined;
let login: Handler;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-auth-reserved-'));
  const { env, cleanup } = await functionEnv({ endpoint: cli.endpoint, tables: tableNames('local') });
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  login = (await import('../../../functions/login.ts')).handler as Handler;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await cleanupKeys?.();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** An import file of `records`, one JSON line each. */
async function jsonl(records: readonly Record<string, unknown>[]) {
  const path = join(dir, `${randomUUID()}.jsonl`);
  await writeFile(path, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
  return path;
}

describe('usernames that could pass for an API client', () => {
  it('user add refuses a name with a colon, client:<id> in any case or spelling, and writes nothing', async () => {
    const id = randomUUID().slice(0, 8);
    for (const username of [`client:${id}`, `CLIENT:${id}`, `client\uFF1A${id}`, `${unique('eshop')}:brno`]) {
      const run = await cli.admin(['user', 'add', username], { password: PASSWORD });

      expect(run.code, username).toBe(2);
      expect(run.stderr.join(' '), username).toContain(NO_COLON);
      expect(await cli.local.findByUsername(username), username).toBeNull();
    }
  });

  it('import refuses a record with such a username and imports nothing', async () => {
    const id = randomUUID().slice(0, 8);
    const hash = bcrypt.hashSync(PASSWORD, 4);
    const fine = unique('fine');
    const path = await jsonl([
      { type: 'user', username: fine, passwordHash: hash },
      { type: 'user', username: `client:${id}`, passwordHash: hash },
    ]);

    const run = await cli.admin(['import', path]);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('line '))).toEqual([
      `line 2: username ${NO_COLON}`,
    ]);
    expect(await cli.local.findByUsername(`client:${id}`)).toBeNull();
    expect(await cli.local.findByUsername(fine)).toBeNull();
  });

  it('answers a login as client:<id> with the 401 of any unknown user', async () => {
    const attempt = (username: string) =>
      login(loginEvent(JSON.stringify({ username, password: PASSWORD })), lambdaContext());

    const name = `client:${randomUUID().slice(0, 8)}`;
    // An operator tries to create it first: no edge lets it in, so no password matches it.
    await cli.admin(['user', 'add', name], { password: PASSWORD });
    await cli.admin(['import', await jsonl([{ type: 'user', username: name, password: PASSWORD }])]);

    const reserved = await attempt(name);
    const unknown = await attempt(unique('nobody'));

    expect(reserved.statusCode).toBe(401);
    expect(reserved.body).toBe(unknown.body);
    // RateLimit differs by the address's one more failure and the second that passed, not by the name.
    const { RateLimit: reservedLeft, ...reservedHeaders } = reserved.headers ?? {};
    const { RateLimit: unknownLeft, ...unknownHeaders } = unknown.headers ?? {};
    expect(reservedHeaders).toEqual(unknownHeaders);
    // Neither name knows the source: only the address's quota is told.
    expect(String(reservedLeft)).toMatch(/^"address";r=\d+;t=\d+$/);
    expect(String(unknownLeft)).toMatch(/^"address";r=\d+;t=\d+$/);
  });
});
