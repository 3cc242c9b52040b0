/**
 * Demo data for an empty local stage: a customer with pickup addresses (the first one
 * without a depot code, so login-extended shows "first non-empty"), a user linked to it, and
 * an API client of it with every scope, so the client credentials grant works from the start.
 * The demo password and the client's id and secret are random per data directory, kept beside
 * the data (`demo-credentials.json`, mode 0600) and printed at every start.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import * as v from 'valibot';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { type ClientRepository, newClientId } from '../../lib/clients/clients.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { SELF_SERVICE_CLIENT_SCOPES } from '../../lib/scopes.ts';

export const DEMO_USERNAME = 'demo';
export const DEMO_CUSTOMER = 'DEMO-CUSTOMER';
export const DEMO_DEPOTS = ['', 'PRG01', 'BRN02'] as const;

/** The demo login: the demo user's username and password. */
export interface DemoCredentials {
  readonly username: string;
  readonly password: string;
}

/** The demo API client, of the demo customer with every scope: its id and its one secret. */
export interface DemoClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** What `demo-credentials.json` holds, and `npm start` prints. */
export type DemoData = DemoCredentials & DemoClientCredentials;

export const demoCredentialsFile = (dataDir: string) => join(dataDir, 'demo-credentials.json');

// A file written before the demo client was seeded holds the login alone.
const StoredSchema = v.object({
  username: v.string(),
  password: v.string(),
  clientId: v.optional(v.string()),
  clientSecret: v.optional(v.string()),
});

/** The file's contents, or null if it is missing or holds no demo login. */
async function readStored(file: string) {
  try {
    const parsed = v.safeParse(StoredSchema, JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

/** Replaces the file whole (a new file renamed over it), so the demo login is never half written. */
async function writeStored(file: string, data: DemoData) {
  const partial = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(partial, `${JSON.stringify(data)}\n`, { mode: 0o600 });
  await rename(partial, file);
}

/** A new client of the demo customer with every scope, made as `client add` makes one. */
async function createDemoClient(
  clients: Pick<ClientRepository, 'createClient'>,
): Promise<DemoClientCredentials> {
  const clientId = newClientId();
  const { secret, stored } = newClientSecret(new Date());
  await clients.createClient({
    clientId,
    customerId: DEMO_CUSTOMER,
    scopes: SELF_SERVICE_CLIENT_SCOPES,
    secret: stored,
  });
  return { clientId, clientSecret: secret };
}

/**
 * Seeds the demo customer, its user (an administrator of it) and API client if the accounts
 * table is empty; returns the
 * demo login and client if known. A data directory seeded before the demo client existed (its
 * file holds the login alone) gets the client now, once: the file then names it.
 */
export async function seedDemo(deps: {
  readonly dataDir: string;
  readonly client: DynamoDBClient;
  readonly accountsTable: string;
  readonly accounts: AccountRepository;
  readonly clients: Pick<ClientRepository, 'createClient'>;
  readonly bcryptCost: number;
}): Promise<DemoData | null> {
  const file = demoCredentialsFile(deps.dataDir);
  const { Count } = await deps.client.send(new ScanCommand({ TableName: deps.accountsTable, Limit: 1 }));
  if (Count === 0) {
    const login = { username: DEMO_USERNAME, password: randomBytes(12).toString('base64url') };
    for (const depot of DEMO_DEPOTS) await deps.accounts.addPickupAddress(DEMO_CUSTOMER, depot);
    const passwordHash = await hashPassword(login.password, deps.bcryptCost);
    await deps.accounts.createUser({
      username: login.username,
      passwordHash,
      customerId: DEMO_CUSTOMER,
    });
    // The demo customer's administrator, so the console (docs/administrators.md) can be tried at once.
    await deps.accounts.setAdministrator(login.username, true);
    const demo = { ...login, ...(await createDemoClient(deps.clients)) };
    await writeStored(file, demo);
    return demo;
  }
  const stored = await readStored(file);
  if (stored === null) return null;
  const { username, password, clientId, clientSecret } = stored;
  if (clientId !== undefined && clientSecret !== undefined)
    return { username, password, clientId, clientSecret };
  const demo = { username, password, ...(await createDemoClient(deps.clients)) };
  await writeStored(file, demo);
  return demo;
}
