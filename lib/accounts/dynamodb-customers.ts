/**
 * A customer's partition: its pickup addresses and members, and the depot code its users
 * derive from those addresses (the consistency argument: lib/accounts/dynamodb.ts).
 */

import { PutCommand, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { type AccountsTable, accountItems, toAddress } from './dynamodb-items.ts';
import { firstDepotCode, type PickupAddress } from './repository.ts';

/** Every item of a customer's partition, in key order (addresses before members). */
async function readCustomer({ client, tableName: TableName }: AccountsTable, customerId: string) {
  const addresses: PickupAddress[] = [];
  const members: string[] = [];
  let pending = false;
  const pages = paginateQuery(
    { client },
    {
      TableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': accountItems.customerPk(customerId) },
      ConsistentRead: true,
    },
  );
  // The pages' requests are sent, and fail, in the `for await`.
  await dynamo(async () => {
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const sk = String(item.sk);
        if (sk.startsWith(accountItems.addressPrefix)) {
          addresses.push(toAddress(item));
          pending = item.pending === true;
        } else if (sk.startsWith(accountItems.memberPrefix)) members.push(String(item.username));
      }
    }
  });
  /** `pending`: the last address was written by an address add that has not finished. */
  return { addresses, members, pending };
}

/** Brings the derived depot code of the customer's users (or of `only`) up to date with a fresh view. */
async function refreshDepotCode(table: AccountsTable, customerId: string, only?: string) {
  const { addresses, members } = await readCustomer(table, customerId);
  const depotCode = firstDepotCode(addresses);
  const usernames = only === undefined ? members : [only];
  await Promise.all(
    // A failed condition: the user moved, was removed, or already holds a view at least as fresh.
    usernames.map((username) =>
      conditional(() =>
        table.client.send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: accountItems.userKey(username),
            UpdateExpression: 'SET depotCode = :depot, addressesSeen = :seen',
            ConditionExpression:
              'customerId = :customer AND (attribute_not_exists(addressesSeen) OR addressesSeen < :seen)',
            ExpressionAttributeValues: {
              ':depot': depotCode,
              ':seen': addresses.length,
              ':customer': customerId,
            },
          }),
        ),
      ),
    ),
  );
}

/** The user's membership of the customer, and its depot code from the customer's addresses. */
export async function joinCustomer(table: AccountsTable, customerId: string, username: string) {
  await dynamo(() =>
    table.client.send(
      new PutCommand({ TableName: table.tableName, Item: accountItems.member(customerId, username) }),
    ),
  );
  await refreshDepotCode(table, customerId, username);
}

/**
 * Written as pending, then the users' depot codes, then done: a run cut short after the
 * address was written is finished by the operator's next run of the same command, instead of
 * adding the address twice. Two runs adding the same depot to one customer at the same moment
 * look alike to the second, which may then finish the first's address instead of adding its own.
 */
export async function addPickupAddress(
  table: AccountsTable,
  customerId: string,
  depotCode: string,
): Promise<PickupAddress> {
  const { client, tableName: TableName } = table;
  const view = await readCustomer(table, customerId);
  const last = view.addresses.at(-1);
  let address: PickupAddress;
  if (view.pending && last !== undefined && last.depotCode === depotCode) {
    address = last;
  } else {
    const counter = await dynamo(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: accountItems.counterKey(customerId),
          UpdateExpression: 'ADD addressCount :one',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    address = {
      customerId,
      position: Number(counter.Attributes?.addressCount),
      depotCode,
      createdAt: table.clock().toISOString(),
    };
    await dynamo(() =>
      client.send(new PutCommand({ TableName, Item: { ...accountItems.address(address), pending: true } })),
    );
  }
  // Read again: a user who joined meanwhile is brought up to date too.
  await refreshDepotCode(table, customerId);
  // A failure to mark it finished loses nothing (a second run would finish it) and is not the
  // caller's failure.
  await conditional(() =>
    client.send(
      new UpdateCommand({
        TableName,
        Key: accountItems.addressKey(customerId, address.position),
        UpdateExpression: 'REMOVE pending',
        ConditionExpression: 'attribute_exists(pk)',
      }),
    ),
  ).catch(() => undefined);
  return address;
}

export async function listPickupAddresses(table: AccountsTable, customerId: string) {
  return (await readCustomer(table, customerId)).addresses;
}
