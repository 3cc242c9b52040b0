/**
 * The DynamoDB client every function builds (lib/aws/dynamodb.ts): how long it waits for a
 * DynamoDB that does not answer, which credentials it signs with, and how it writes an
 * attribute that is undefined. Against a silent server on loopback and the embedded DynamoDB.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { AWS_REQUESTS, LOCAL_REQUESTS, MAX_ATTEMPTS } from '../../lib/aws/requests.ts';
import { startTestDynamo, type TestDynamo } from '../support/dynamo.ts';

/** A TCP server on 127.0.0.1 that accepts every connection and never answers on it. */
async function startSilentServer() {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((closed) => server.close(closed));
    },
  };
}

/** Credentials in the environment, as a Lambda function's role gives them. */
const ENVIRONMENT_CREDENTIALS = {
  accessKeyId: 'AKIAFROMENVIRONMENT',
  secretAccessKey: 'secret-from-environment',
};
const stubEnvironmentCredentials = () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', ENVIRONMENT_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', ENVIRONMENT_CREDENTIALS.secretAccessKey);
};

describe('DynamoDB client', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  /** A GetItem sent by `client`, and what it failed with; the client is destroyed afterwards. */
  const failedGet = async (client: DynamoDBDocumentClient) => {
    try {
      return await client
        .send(new GetCommand({ TableName: 'users', Key: { pk: 'USER#alice', sk: 'USER' } }))
        .catch((error: unknown) => error);
    } finally {
      client.destroy();
    }
  };

  /** The request bounds the client's HTTP handler resolved (known once it has sent a request). */
  const boundsOf = (client: DynamoDBDocumentClient) =>
    (client.config.requestHandler as { httpHandlerConfigs(): Record<string, unknown> }).httpHandlerConfigs();

  it('gives up on an AWS DynamoDB that never answers after three attempts with the AWS bounds', async () => {
    // Arrange: no endpoint setting, as on AWS; the SDK's own endpoint variable leads it to the silent server.
    const silent = await startSilentServer();
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', silent.endpoint);
    stubEnvironmentCredentials();
    const client = createDocumentClient({ region: 'eu-central-1', dynamodbEndpoint: undefined });

    // Act
    const failure = await failedGet(client).finally(silent.close);

    // Assert
    expect(failure).toMatchObject({ name: 'TimeoutError' });
    expect(silent.connections()).toBe(MAX_ATTEMPTS);
    expect(boundsOf(client)).toMatchObject(AWS_REQUESTS);
  }, 15_000);

  it('gives up on a local DynamoDB that never answers after three attempts with the local bounds', async () => {
    // Arrange
    const silent = await startSilentServer();
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: silent.endpoint });

    // Act
    const failure = await failedGet(client).finally(silent.close);

    // Assert
    expect(failure).toMatchObject({ name: 'TimeoutError' });
    expect(silent.connections()).toBe(MAX_ATTEMPTS);
    expect(boundsOf(client)).toMatchObject(LOCAL_REQUESTS);
  }, 20_000);

  it('signs requests to a local endpoint with the dummy credentials, whatever the environment holds', async () => {
    // Arrange
    stubEnvironmentCredentials();
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: 'http://127.0.0.1:8000' });

    // Act
    const credentials = await client.config.credentials();

    // Assert
    expect(credentials).toMatchObject({ accessKeyId: 'local', secretAccessKey: 'local' });
    client.destroy();
  });

  it('signs requests to AWS with the credentials the environment gives the function', async () => {
    // Arrange
    stubEnvironmentCredentials();
    const client = createDocumentClient({ region: 'eu-central-1', dynamodbEndpoint: undefined });

    // Act
    const credentials = await client.config.credentials();

    // Assert
    expect(credentials).toMatchObject(ENVIRONMENT_CREDENTIALS);
    client.destroy();
  });

  describe('against the embedded DynamoDB', () => {
    let dynamo: TestDynamo;
    beforeAll(async () => {
      dynamo = await startTestDynamo();
    });
    afterAll(() => dynamo?.close());

    it('writes an item with an undefined value in a map, leaving the value out', async () => {
      // Arrange (an undefined top-level attribute the document client drops whatever its options)
      const client = createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint });
      const Key = { pk: 'USER#undefined-value', sk: 'USER' };

      // Act
      await client.send(
        new PutCommand({
          TableName: dynamo.tables.accounts,
          Item: { ...Key, depot: { depotCode: 'D1', note: undefined } },
        }),
      );

      // Assert
      const { Item } = await client.send(new GetCommand({ TableName: dynamo.tables.accounts, Key }));
      expect(Item).toEqual({ ...Key, depot: { depotCode: 'D1' } });
      client.destroy();
    });
  });
});
