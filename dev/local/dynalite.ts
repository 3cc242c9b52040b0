/**
 * The embedded DynamoDB of the local stack and the tests: dynalite (pure JavaScript, on
 * LevelDB), bound to loopback. With a data path its tables survive a restart.
 */
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { LOCAL_CREDENTIALS } from '../../lib/aws/dynamodb.ts';

export interface EmbeddedDynamo {
  readonly endpoint: string;
  readonly port: number;
  /** A low-level client for this instance (dummy credentials: dynalite accepts any). */
  client(): DynamoDBClient;
  close(): Promise<void>;
}

/** A low-level client for a DynamoDB on loopback, with the dummy credentials it accepts. */
export const localDynamoClient = (endpoint: string, config: DynamoDBClientConfig = {}) =>
  new DynamoDBClient({ endpoint, region: 'local', credentials: LOCAL_CREDENTIALS, ...config });

/** Starts dynalite on 127.0.0.1:`port` (0 = a free port); in memory unless `path` is given. */
export async function startDynalite(options: { port: number; path?: string }): Promise<EmbeddedDynamo> {
  const server = dynalite({
    ...(options.path !== undefined && { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    client: () => localDynamoClient(endpoint),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
