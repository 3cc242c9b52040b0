/** DynamoDB clients, built once per container and shared by every request it serves. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AWS_REQUESTS, LOCAL_REQUESTS, MAX_ATTEMPTS } from './requests.ts';

/** Where a function reaches DynamoDB. */
export interface DataSettings {
  readonly region: string;
  /** Set on the local stage only; undefined means the regional AWS endpoint. */
  readonly dynamodbEndpoint: string | undefined;
}

/** What the embedded DynamoDB and DynamoDB Local accept: any credentials at all. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * A document client whose calls fail within seconds when DynamoDB does not answer (a 503,
 * not a Lambda timeout). Locally, dummy credentials keep the SDK from searching for real ones.
 */
export function createDocumentClient(settings: DataSettings): DynamoDBDocumentClient {
  const local = settings.dynamodbEndpoint !== undefined;
  const client = new DynamoDBClient({
    region: settings.region,
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: local ? LOCAL_REQUESTS : AWS_REQUESTS,
    ...(local && { endpoint: settings.dynamodbEndpoint, credentials: LOCAL_CREDENTIALS }),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
