/** DynamoDB clients, built once per container and shared by every request it serves. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Where a function reaches DynamoDB. */
export interface DataSettings {
  readonly region: string;
  /** Set on the local stage only; undefined means the regional AWS endpoint. */
  readonly dynamodbEndpoint: string | undefined;
}

/**
 * A document client with short timeouts: a login waits for DynamoDB at most about a second
 * in total before the caller gets a 503, instead of hanging until the Lambda times out.
 * On the local stage the endpoint points at the embedded DynamoDB on loopback, which
 * accepts any credentials; fixed dummy ones keep the SDK from searching for real ones.
 */
export function createDocumentClient(settings: DataSettings): DynamoDBDocumentClient {
  const local = settings.dynamodbEndpoint !== undefined;
  const client = new DynamoDBClient({
    region: settings.region,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 2000 },
    ...(local && {
      endpoint: settings.dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
