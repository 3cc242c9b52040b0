/**
 * The grant whose secret's last use is due: lib/clients/grant.ts records a secret's use at most
 * once per LAST_USE_PRECISION_MS (an hour), with one conditional UpdateItem beside the signing,
 * so the first grant of a secret's hour makes one request more than the others.
 *
 * A warm grant writes its use, so the next one with that secret is the steady state again: the
 * rows that time the first grant of the hour take their clients from a pool (as the bench's own,
 * two live secrets each), one per call of a batch, and before each batch, untimed, set each one's
 * secret and client back to a last use two hours old. Setting back a client a batch used first
 * checks that the batch's call wrote its use, so the rows cannot have timed the steady state.
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailure } from '../../lib/aws/errors.ts';
import { clientKey } from '../../lib/clients/dynamodb-items.ts';
import { LAST_USE_PRECISION_MS } from '../../lib/clients/secrets.ts';
import { type SeededClient, seedClient } from './stage.ts';

export interface DueClients {
  /** The pool's first `calls` clients, each's last use set back to two hours ago. */
  setBack(calls: number): Promise<readonly SeededClient[]>;
  /** Throws unless every client handed out since its last set-back has recorded its use. */
  assertRecorded(): Promise<void>;
}

/** A pool of `size` clients whose last use is due whenever setBack() hands them out. */
export async function dueClients(options: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly size: number;
}): Promise<DueClients> {
  const { client, tableName } = options;
  const pool: SeededClient[] = [];
  for (let index = 0; index < options.size; index++) pool.push(await seedClient(client, tableName));
  /** When each client was last handed out, by id: a use recorded since is its call's. */
  const handedOut = new Map<string, string>();

  /** Sets `of`'s last use back; first, when it was handed out, checks that its call recorded one. */
  async function setBackOne(of: SeededClient, at: string) {
    const since = handedOut.get(of.clientId);
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: clientKey(of.clientId),
          UpdateExpression: 'SET secrets.#id.lastUsedAt = :at, lastUsedAt = :at',
          ...(since !== undefined && { ConditionExpression: 'secrets.#id.lastUsedAt >= :since' }),
          ExpressionAttributeNames: { '#id': of.secretId },
          ExpressionAttributeValues: { ':at': at, ...(since !== undefined && { ':since': since }) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
      throw new Error(
        `client ${of.clientId} recorded no last use since ${since}: its row timed the steady state`,
      );
    }
    handedOut.delete(of.clientId);
  }

  return {
    async setBack(calls) {
      if (calls > pool.length) throw new Error(`a batch of ${calls} calls from a pool of ${pool.length}`);
      const clients = pool.slice(0, calls);
      const due = new Date(Date.now() - 2 * LAST_USE_PRECISION_MS).toISOString();
      await Promise.all(clients.map((of) => setBackOne(of, due)));
      const now = new Date().toISOString();
      for (const of of clients) handedOut.set(of.clientId, now);
      return clients;
    },
    async assertRecorded() {
      const due = new Date(Date.now() - 2 * LAST_USE_PRECISION_MS).toISOString();
      await Promise.all(pool.filter((of) => handedOut.has(of.clientId)).map((of) => setBackOne(of, due)));
    },
  };
}
