/**
 * Spent `jti`s on the sessions table (beside the refresh sessions and the passkey challenges,
 * under a prefix of their own per kind), one item per owner and `jti`, kept past the last moment
 * what it identifies could be taken (`keepUntil`: DynamoDB's TTL removes it later still; once
 * gone, an assertion or proof is refused for its age). Spent by one conditional write with the
 * spender's id, so the SDK's resend of our own write is ours, and any other a replay.
 */
import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import type { ReplayStore } from './replay.ts';

/** `private_key_jwt`'s assertions, by client (lib/clients/client-auth.ts). */
export const ASSERTION_PREFIX = 'jti#';
/** DPoP proofs, by the thumbprint of their key (lib/dpop/proof.ts). */
export const DPOP_PREFIX = 'dpop#';
export type ReplayPrefix = typeof ASSERTION_PREFIX | typeof DPOP_PREFIX;

/** The item's key: the owner and the digest of its `jti` (any text up to 256 characters). */
export const spentKey = (prefix: ReplayPrefix, owner: string, jti: string) => ({
  sessionId: `${prefix}${owner}#${createHash('sha256').update(jti).digest('base64url')}`,
});

export function createDynamoReplayStore(table: Table, prefix: ReplayPrefix): ReplayStore {
  const { client, tableName: TableName } = table;
  return {
    async spend(owner, jti, keepUntil, spender) {
      const spent = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: spentKey(prefix, owner, jti),
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
