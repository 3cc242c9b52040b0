/**
 * Demo data for an empty local stage: a customer with pickup addresses (the first one
 * without a depot code, so login-extended shows "first non-empty") and a user linked to it.
 * The demo password is random per data directory, kept beside the data and printed at start.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';

export const DEMO_USERNAME = 'demo';
export const DEMO_CUSTOMER = 'DEMO-CUSTOMER';
export const DEMO_DEPOTS = ['', 'PRG01', 'BRN02'] as const;

export interface DemoCredentials {
  readonly username: string;
  readonly password: string;
}

export const demoCredentialsFile = (dataDir: string) => join(dataDir, 'demo-credentials.json');

/** Seeds the demo customer and user if the accounts table is empty; returns the demo login if known. */
export async function seedDemo(deps: {
  readonly dataDir: string;
  readonly client: DynamoDBClient;
  readonly accountsTable: string;
  readonly accounts: AccountRepository;
  readonly bcryptCost: number;
}): Promise<DemoCredentials | null> {
  const file = demoCredentialsFile(deps.dataDir);
  const { Count } = await deps.client.send(new ScanCommand({ TableName: deps.accountsTable, Limit: 1 }));
  if (Count === 0) {
    const credentials = { username: DEMO_USERNAME, password: randomBytes(12).toString('base64url') };
    for (const depot of DEMO_DEPOTS) await deps.accounts.addPickupAddress(DEMO_CUSTOMER, depot);
    const passwordHash = await hashPassword(credentials.password, deps.bcryptCost);
    await deps.accounts.createUser({
      username: credentials.username,
      passwordHash,
      customerId: DEMO_CUSTOMER,
    });
    await writeFile(file, `${JSON.stringify(credentials)}\n`, { mode: 0o600 });
    return credentials;
  }
  try {
    return JSON.parse(await readFile(file, 'utf8')) as DemoCredentials;
  } catch {
    return null;
  }
}
