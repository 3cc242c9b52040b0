/**
 * A customer's security policy (lib/customer/security-policy.ts), one item of its partition:
 * `pk` CUSTOMER#<id>, `sk` POLICY. No item: the default policy.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import { DEFAULT_SECURITY_POLICY, type SecurityPolicies } from '../customer/administration.ts';
import { accountItems } from './dynamodb-items.ts';

export const policyKey = (customerId: string) => ({ pk: accountItems.customerPk(customerId), sk: 'POLICY' });

export function createDynamoSecurityPolicies({ client, tableName: TableName }: Table): SecurityPolicies {
  return {
    async find(customerId) {
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({
            TableName,
            Key: policyKey(customerId),
            ProjectionExpression: 'administratorsRequirePasskey, shipmentsWriteRequiresDpop',
            ConsistentRead: true,
          }),
        ),
      );
      return Item === undefined
        ? DEFAULT_SECURITY_POLICY
        : {
            administratorsRequirePasskey: Item.administratorsRequirePasskey === true,
            shipmentsWriteRequiresDpop: Item.shipmentsWriteRequiresDpop === true,
          };
    },

    async set(customerId, policy, by) {
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: {
              ...policyKey(customerId),
              administratorsRequirePasskey: policy.administratorsRequirePasskey,
              shipmentsWriteRequiresDpop: policy.shipmentsWriteRequiresDpop,
              updatedBy: by.actor,
              updatedAt: by.at.toISOString(),
            },
          }),
        ),
      );
    },
  };
}
