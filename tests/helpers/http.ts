/** Small HTTP helpers for the end-to-end tests. */
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoAccountRepository } from '../../lib/users/dynamodb.ts';
import type { LocalStack } from './stack.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export async function send(
  stack: LocalStack,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const hasBody = options.body !== undefined || options.raw !== undefined;
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { ...(hasBody && { 'content-type': 'application/json' }), ...options.headers },
    ...(hasBody && { body: options.raw ?? JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: tests that care look at `text`.
  }
  return { status: response.status, headers: response.headers, text, json };
}

export const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });

/** The account repository of a running local stack, for setting up users directly. */
export const stackAccounts = (stack: LocalStack) =>
  createDynamoAccountRepository({
    client: createDocumentClient({
      region: 'local',
      dynamodbEndpoint: `http://127.0.0.1:${stack.ports.dynamodb}`,
    }),
    tableName: tableNames('local').accounts,
  });
