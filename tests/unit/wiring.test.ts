/** lib/wiring/: what a container builds once. */
import { describe, expect, it } from 'vitest';
import { documentClient } from '../../lib/wiring/shared.ts';

describe('wiring', () => {
  it('builds one DynamoDB client per container for every store that reaches the same endpoint', () => {
    const data = { region: 'eu-central-1', dynamodbEndpoint: 'http://127.0.0.1:1' };
    const first = documentClient(data);
    expect(documentClient({ ...data })).toBe(first);
    expect(documentClient({ ...data, dynamodbEndpoint: 'http://127.0.0.1:2' })).not.toBe(first);
  });
});
