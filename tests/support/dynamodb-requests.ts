/** DynamoDB requests as the code builds them, for holding them to a role's IAM conditions. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A client that only writes each request down, answering `{}`; `requestsOf(call)` gives a call's. */
export function recordingClient() {
  const sent: Record<string, unknown>[] = [];
  const client = {
    send: async (command: { input: Record<string, unknown> }) => {
      sent.push(command.input);
      return {};
    },
  } as unknown as DynamoDBDocumentClient;
  const requestsOf = async (call: () => Promise<unknown>) => {
    sent.length = 0;
    await call();
    return [...sent];
  };
  return { client, requestsOf };
}

const EXPRESSION_WORDS = new Set(['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN']);
/**
 * The top-level attribute names a DynamoDB request touches, as IAM's dynamodb:Attributes
 * sees them: its key and the first element of every path in its expressions (`#name`
 * placeholders resolved; values, functions and keywords left out).
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
  const attributes = new Set(Object.keys((request.Key ?? {}) as object));
  for (const expression of expressions) {
    for (const [, first] of expression.matchAll(/(?<![\w.#:\]])(#?[A-Za-z_]\w*)(?![\w#]|\s*\()/g)) {
      if (first === undefined || EXPRESSION_WORDS.has(first.toUpperCase())) continue;
      attributes.add(first.startsWith('#') ? (names[first] ?? first) : first);
    }
  }
  return [...attributes].sort();
}
