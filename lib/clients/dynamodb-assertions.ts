/**
 * `private_key_jwt`'s spent `jti`s on the sessions table (beside the refresh sessions and the
 * passkey challenges, under a prefix of their own), one item per client and `jti`, kept past
 * the last moment its assertion could be taken (`keepUntil`: DynamoDB's TTL removes it later
 * still; once gone, its assertion is refused for its age). Spent by one conditional write with the
 * spender's id, so the SDK's resend of our own write is ours, and any other a replay.
 */
import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import type { AssertionReplayStore } from './client-auth.ts';

export const ASSERTION_PREFIX = 'jti#';

/** The item's key: the client's id and the digest of its `jti` (any text up to 256 characters). */
export const assertionKey = (clientId: string, jti: string) => ({
  sessionId: `${ASSERTION_PREFIX}${clientId}#${createHash('sha256').update(jti).digest('base64url')}`,
});

export function createDynamoAssertionReplayStore(table: Table): AssertionReplayStore {
  const { client, tableName: TableName } = table;
  return {
    async spend(clientId, jti, keepUntil, spender) {
      const spent = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: assertionKey(clientId, jti),
            UpdateExpression: 'SET spentBy = :spender, expiresAt = :exp',
            ConditionExpression: 'attribute_not_exists(sessionId) OR spentBy = :spender',
            ExpressionAttributeValues: { ':spender': spender, ':exp': keepUntil },
          }),
        ),
      );
      return spent !== undefined;
    },
  };
}
