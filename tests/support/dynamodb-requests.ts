/** DynamoDB requests as the code builds them, for holding them to a role's IAM statements. */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { joined, type Resources, type Statement, statementsOf } from './cloudformation.ts';

/** The IAM action of each document client command the code sends. */
const ACTIONS: Record<string, string> = {
  GetCommand: 'dynamodb:GetItem',
  PutCommand: 'dynamodb:PutItem',
  UpdateCommand: 'dynamodb:UpdateItem',
  DeleteCommand: 'dynamodb:DeleteItem',
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
};

/** One request the code sent: its IAM action and its input. */
export interface Sent {
  readonly action: string;
  readonly request: Record<string, unknown>;
}

/**
 * A client that only writes each request down, answering `answer`'s reply (`{}` by default);
 * `sentBy(call)` gives a call's requests with their actions.
 */
export function recordingClient(answer: (sent: Sent) => unknown = () => ({})) {
  const sent: Sent[] = [];
  // A DynamoDBDocumentClient by its prototype: lib-dynamodb's paginators refuse any other client.
  const client = Object.assign(Object.create(DynamoDBDocumentClient.prototype) as DynamoDBDocumentClient, {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const action = ACTIONS[command.constructor.name];
      if (action === undefined) throw new Error(`unexpected command ${command.constructor.name}`);
      const request = { action, request: command.input };
      sent.push(request);
      return answer(request) ?? {};
    },
  });
  const sentBy = async (call: () => Promise<unknown>) => {
    sent.length = 0;
    await call();
    return [...sent];
  };
  return { client, sentBy };
}

const EXPRESSION_WORDS = new Set(['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN']);
/**
 * The top-level attribute names a DynamoDB request touches, as IAM's dynamodb:Attributes
 * sees them: its key, a put item's attributes and the first element of every path in its
 * expressions (`#name` placeholders resolved; values, functions and keywords left out).
 */
export function attributesOf(request: Record<string, unknown>): string[] {
  const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const expressions = [
    request.UpdateExpression,
    request.ConditionExpression,
    request.ProjectionExpression,
    request.KeyConditionExpression,
    request.FilterExpression,
  ].filter((expression): expression is string => typeof expression === 'string');
  const attributes = new Set([
    ...Object.keys((request.Key ?? {}) as object),
    ...Object.keys((request.Item ?? {}) as object),
  ]);
  for (const expression of expressions) {
    for (const [, first] of expression.matchAll(/(?<![\w.#:\]])(#?[A-Za-z_]\w*)(?![\w#]|\s*\()/g)) {
      if (first === undefined || EXPRESSION_WORDS.has(first.toUpperCase())) continue;
      attributes.add(first.startsWith('#') ? (names[first] ?? first) : first);
    }
  }
  return [...attributes].sort();
}

type Condition = Record<string, Record<string, unknown>>;
type KeySchema = { AttributeName: string; KeyType: string }[];

/** The condition keys read here: a statement with any other fails the check rather than go unchecked. */
export const CHECKED_CONDITION_KEYS = [
  'ForAllValues:StringLike dynamodb:LeadingKeys',
  'ForAllValues:StringEquals dynamodb:Attributes',
  'StringEqualsIfExists dynamodb:ReturnValues',
  'StringEqualsIfExists dynamodb:Select',
];

/** The table (or index) a request addresses, as its ARN reads in a statement, and its partition key. */
function targetOf(resources: Resources, request: Record<string, unknown>) {
  const [id, table] =
    Object.entries(resources).find(
      ([, resource]) =>
        resource.Type === 'AWS::DynamoDB::Table' && resource.Properties.TableName === request.TableName,
    ) ?? [];
  if (id === undefined || table === undefined) throw new Error(`no table ${String(request.TableName)}`);
  const index = request.IndexName as string | undefined;
  const schema =
    index === undefined
      ? (table.Properties.KeySchema as KeySchema)
      : (table.Properties.GlobalSecondaryIndexes as { IndexName: string; KeySchema: KeySchema }[]).find(
          (gsi) => gsi.IndexName === index,
        )?.KeySchema;
  if (schema === undefined) throw new Error(`no index ${index} on ${id}`);
  return {
    arn: `<${id}.Arn>${index === undefined ? '' : `/index/${index}`}`,
    partitionKey: schema.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '',
  };
}

/** The partition key value a request addresses: its key's, its item's, or the one its key condition binds. */
function leadingKeyOf(request: Record<string, unknown>, partitionKey: string): string {
  const direct =
    (request.Key as Record<string, unknown> | undefined)?.[partitionKey] ??
    (request.Item as Record<string, unknown> | undefined)?.[partitionKey];
  if (direct !== undefined) return String(direct);
  const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (request.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const [, name = '', value = ''] of String(request.KeyConditionExpression ?? '').matchAll(
    /(#?\w+)\s*=\s*(:\w+)/g,
  )) {
    if ((names[name] ?? name) === partitionKey) return String(values[value]);
  }
  throw new Error(`no ${partitionKey} in ${JSON.stringify(request)}`);
}

/** IAM's StringLike: `*` any run of characters, `?` any one. */
const like = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
  ).test(value);

/** Why a statement's `condition` refuses the request: nothing when it allows it. */
function refusals(condition: Condition, sent: Sent, leadingKey: () => string): string[] {
  const found: string[] = [];
  const { action, request } = sent;
  for (const [operator, values] of Object.entries(condition)) {
    for (const key of Object.keys(values)) {
      if (!CHECKED_CONDITION_KEYS.includes(`${operator} ${key}`)) found.push(`unchecked ${operator} ${key}`);
    }
  }
  const leading = condition['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[] | undefined;
  if (leading !== undefined) {
    const key = leadingKey();
    if (!leading.some((pattern) => like(pattern, key))) found.push(`key ${key} not in ${leading.join(', ')}`);
  }
  const allowed = condition['ForAllValues:StringEquals']?.['dynamodb:Attributes'] as string[] | undefined;
  if (allowed !== undefined) {
    const outside = attributesOf(request).filter((attribute) => !allowed.includes(attribute));
    if (outside.length > 0) found.push(`attributes ${outside.join(', ')}`);
    // A read that names no attributes gets every one of them.
    const read = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:BatchGetItem'];
    if (read.includes(action) && request.ProjectionExpression === undefined)
      found.push('a read of every attribute');
  }
  const returnValues = condition.StringEqualsIfExists?.['dynamodb:ReturnValues'] as string[] | undefined;
  if (
    returnValues !== undefined &&
    request.ReturnValues !== undefined &&
    !returnValues.includes(String(request.ReturnValues))
  )
    found.push(`return values ${request.ReturnValues}`);
  const select = condition.StringEqualsIfExists?.['dynamodb:Select'];
  if (select !== undefined && request.Select !== undefined && request.Select !== select)
    found.push(`select ${request.Select}`);
  return found;
}

/**
 * The role's statements that allow a request the code sent (its action, on its table or index,
 * under the statement's conditions), and why each other statement naming its action refuses it.
 */
export function allowingStatements(resources: Resources, roleId: string, sent: Sent) {
  const { arn, partitionKey } = targetOf(resources, sent.request);
  const leadingKey = () => leadingKeyOf(sent.request, partitionKey);
  const allowing: Statement[] = [];
  const refused: string[] = [];
  for (const statement of statementsOf(resources, roleId)) {
    if (!statement.Action.includes(sent.action)) continue;
    if (!statement.Resource.map(joined).includes(arn)) continue;
    const reasons = refusals((statement.Condition ?? {}) as Condition, sent, leadingKey);
    if (reasons.length === 0) allowing.push(statement);
    else refused.push(reasons.join('; '));
  }
  return { allowing, refused, arn };
}
