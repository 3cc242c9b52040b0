/**
 * An integrator brought over from the old system logs in with their old password: the
 * admin CLI imports docs/import-example.jsonl into the local stack (a child process, as an
 * operator runs it), then login-extended answers through serverless-offline.
 */
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import bcrypt from 'bcryptjs';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { readStageParams } from '../../infra/stage-params.ts';
import { send } from '../support/http.ts';
import { runScript } from '../support/run-script.ts';

const ROOT = resolve(import.meta.dirname, '../..');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(() => stack?.stop());

/** The admin CLI's import into the stack, as an operator runs it. */
function adminImport(file: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  return runScript('ops/admin.ts', ['import', file], {
    env: { ...env, DYNAMODB_PORT: String(stack.ports.dynamodb), DATA_DIR: stack.dataDir },
  });
}

describe('imported users through the local stack', () => {
  it('logs in a user whose legacy $2y$ hash was imported, with the old password, and upgrades the hash', async () => {
    const imported = await adminImport(resolve(ROOT, 'docs/import-example.jsonl'));
    expect(imported).toMatchObject({ code: 0 });
    expect(imported.stdout).toContain('created 5, unchanged 0, updated 0, skipped 0, failed 0');

    const answer = await send(stack, 'POST', '/login-extended', {
      body: { username: 'eshop-brno', password: 'legacy-password-1' },
    });

    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ userName: 'eshop-brno', depotCode: 'BRQ02' });
    expect(decodeJwt(String(answer.json.token)).sub).toBe('eshop-brno');
    // Cost 4 is below the local stage's: the first login upgraded it, as for any user.
    const upgraded = await stackAccounts(stack).findByUsername('eshop-brno');
    expect(upgraded?.passwordHash.startsWith('$2y$04$')).toBe(false);
  });

  it('imports the same file again after that login re-hashed the legacy hash: every record unchanged, exit 0', async () => {
    const again = await adminImport(resolve(ROOT, 'docs/import-example.jsonl'));

    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain(
      'nothing to change: created 0, unchanged 5, updated 0, skipped 0, failed 0',
    );
  });

  it('logs in a user imported with a cost-12 hash (Rails’, Django’s, Laravel’s default) and re-hashes it at the stage’s cost', async () => {
    const stageCost = readStageParams('local', {}).bcryptCost;
    const file = join(stack.dataDir, 'cost-12.jsonl');
    // bcrypt.hashSync('rails-password-12', 12) as PHP writes it, made once: hashing costs 250 ms.
    const legacy = '$2y$12$YLZvRjY27sqpnyWf15Bf0OVvcZ4AUEDGFlFUdGfc0zgFiB5AZWXdK';
    await writeFile(
      file,
      `${JSON.stringify({ type: 'user', username: 'rails-12', passwordHash: legacy })}\n`,
    );
    expect(await adminImport(file)).toMatchObject({ code: 0 });

    const first = await send(stack, 'POST', '/login', {
      body: { username: 'rails-12', password: 'rails-password-12' },
    });

    expect(first.status).toBe(200);
    const rehashed = (await stackAccounts(stack).findByUsername('rails-12'))?.passwordHash ?? '';
    expect(bcrypt.getRounds(rehashed)).toBe(stageCost);
    const second = await send(stack, 'POST', '/login', {
      body: { username: 'rails-12', password: 'rails-password-12' },
    });
    expect(second.status).toBe(200);
  });

  it('refuses the disabled imported user with the one answer of every failed login', async () => {
    const answer = await send(stack, 'POST', '/login', {
      body: { username: 'Warehouse.Ostrava', password: 'another-legacy-pw' },
    });
    expect(answer.status).toBe(401);
  });
});
