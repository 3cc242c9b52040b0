/**
 * A client's authentication made bare, for the floors of the grants (dev/bench/grant.ts,
 * dev/bench/platform.ts): the token endpoint's two DynamoDB steps around the secret check (the
 * client's consistent GetItem beside an UpdateItem of each attempt counter, then an UpdateItem of
 * each counter, through the throttle's own store: dev/bench/counters.ts), with none of the
 * decisions around them.
 */
import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { clientKey } from '../../lib/clients/dynamodb-items.ts';
import { type ClientSecret, matchSecret } from '../../lib/clients/secrets.ts';
import type { BareAttempt, bareCounters } from './counters.ts';
import type { BenchClient } from './stage.ts';

/** The live secrets of a client item as stored: a map by secret id. */
export function storedSecrets(item: Record<string, unknown> | undefined): ClientSecret[] {
  const map = (item?.secrets ?? {}) as Record<string, { digest: string; createdAt: string }>;
  return Object.entries(map).map(([id, { digest, createdAt }]) => ({ id, digest, createdAt }));
}

export function bareClientAuthentication(options: {
  readonly client: DynamoDBDocumentClient;
  readonly accountsTable: string;
  readonly counters: ReturnType<typeof bareCounters>;
  /** The known-source tag the counters' writes carry, as the handler's do. */
  readonly tag: string;
}) {
  const { client, accountsTable, counters, tag } = options;
  const readClient = (clientId: string) =>
    client.send(new GetCommand({ TableName: accountsTable, Key: clientKey(clientId), ConsistentRead: true }));
  /** The secret check between the reads and the writes: the client's secret id. */
  const check = (presented: string, read: { Item?: Record<string, unknown> }) => {
    const secretId = matchSecret(presented, storedSecrets(read.Item), new Date());
    if (secretId === null) throw new Error('secret check failed');
    return secretId;
  };
  /** The two steps, `between` them (a secret's check, or a key's): its secret id, and when the client was read. */
  async function steps(
    clientId: string,
    between: (read: { Item?: Record<string, unknown> }) => string | Promise<string>,
  ) {
    const attempt: BareAttempt = { id: randomUUID(), at: Date.now() };
    const [read] = await Promise.all([
      readClient(clientId),
      counters.reserveName('FLOOR#CLIENT', attempt, tag),
      counters.reserveAddress('FLOOR#IP', attempt),
    ]);
    const secretId = await between(read);
    await Promise.all([counters.reset('FLOOR#CLIENT', attempt, tag), counters.release('FLOOR#IP', attempt)]);
    return { secretId, readAt: new Date(attempt.at) };
  }
  return {
    readClient,
    check,
    steps,
    /** The two steps, the secret check between them: the secret id, and when the client was read. */
    authenticate: (of: BenchClient) => steps(of.clientId, (read) => check(of.secret, read)),
  };
}
