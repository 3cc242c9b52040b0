/**
 * The bench's peer: node-oidc-provider (`oidc-provider` on npm, OpenID-certified) on the same
 * embedded DynamoDB as ours, for a platform's grants side by side (dev/bench/platform.ts).
 *
 * Its adapter is a DynamoDB one in the shape of the adapter interface's example
 * (example/my_adapter.js of panva/node-oidc-provider): one table keyed by model and id, the
 * payload as one map, a time to live, and an index each for `revokeByGrantId`, `findByUid` and
 * `findByUserCode`. Its client is a dynamic one, stored in that table and found there on every
 * request (as our clients are); its access tokens are RFC 9068 JWTs (its resource indicators
 * feature) signed with EdDSA, as ours; its refresh tokens are opaque, stored and rotated.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, type DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';

/** The secondary keys the adapter interface looks items up by, each an index of the table. */
const INDEXES = ['grantId', 'uid', 'userCode'] as const;

export async function createPeerTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'modelId', AttributeType: 'S' },
        ...INDEXES.map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
      ],
      KeySchema: [{ AttributeName: 'modelId', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: INDEXES.map((name) => ({
        IndexName: name,
        KeySchema: [{ AttributeName: name, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  // `expiresAt` would be its time to live on AWS; the embedded DynamoDB has none, and find() checks it.
  await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: tableName });
}

/** The adapter interface of oidc-provider on one DynamoDB table; reads are consistent. */
function dynamoAdapter(client: DynamoDBDocumentClient, tableName: string) {
  return class DynamoAdapter implements Adapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    private key(id: string) {
      return { modelId: `${this.name}:${id}` };
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      const secondary = Object.fromEntries(
        INDEXES.flatMap((name) => (typeof payload[name] === 'string' ? [[name, payload[name]]] : [])),
      );
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...this.key(id),
            payload,
            ...secondary,
            ...(expiresIn > 0 && { expiresAt: Math.floor(Date.now() / 1000) + expiresIn }),
          },
        }),
      );
    }

    async find(id: string) {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: this.key(id), ConsistentRead: true }),
      );
      if (Item === undefined) return undefined;
      if (typeof Item.expiresAt === 'number' && Item.expiresAt < Date.now() / 1000) return undefined;
      return Item.payload as AdapterPayload;
    }

    private async findBy(index: (typeof INDEXES)[number], value: string) {
      const { Items } = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index,
          KeyConditionExpression: '#key = :value',
          ExpressionAttributeNames: { '#key': index },
          ExpressionAttributeValues: { ':value': value },
          Limit: 1,
        }),
      );
      return Items?.[0]?.payload as AdapterPayload | undefined;
    }

    findByUid(uid: string) {
      return this.findBy('uid', uid);
    }

    findByUserCode(userCode: string) {
      return this.findBy('userCode', userCode);
    }

    async consume(id: string) {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: this.key(id),
          UpdateExpression: 'SET #payload.#consumed = :now',
          ConditionExpression: 'attribute_exists(modelId)',
          ExpressionAttributeNames: { '#payload': 'payload', '#consumed': 'consumed' },
          ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
        }),
      );
    }

    async destroy(id: string) {
      await client.send(new DeleteCommand({ TableName: tableName, Key: this.key(id) }));
    }

    async revokeByGrantId(grantId: string) {
      const { Items = [] } = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'grantId',
          KeyConditionExpression: 'grantId = :grantId',
          ExpressionAttributeValues: { ':grantId': grantId },
        }),
      );
      await Promise.all(
        Items.map((item) =>
          client.send(new DeleteCommand({ TableName: tableName, Key: { modelId: item.modelId } })),
        ),
      );
    }
  };
}

export interface PeerOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The access tokens' `aud`: the resource server. */
  readonly audience: string;
  readonly scopes: readonly string[];
  readonly redirectUri: string;
  readonly accessTtlSeconds: number;
  readonly refreshTtlSeconds: number;
}

/** The peer on 127.0.0.1, its one platform stored, and what mints its codes and refresh tokens. */
export async function startPeer(options: PeerOptions) {
  const server: Server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'EdDSA', use: 'sig' };
  const scope = options.scopes.join(' ');
  const adapter = dynamoAdapter(options.client, options.tableName);
  const provider = new Provider(issuer, {
    adapter,
    jwks: { keys: [signingKey] },
    scopes: ['offline_access', ...options.scopes],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope,
          audience: options.audience,
          accessTokenTTL: options.accessTtlSeconds,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'EdDSA' } },
        }),
      },
    },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: () => true,
    ttl: { RefreshToken: options.refreshTtlSeconds, AuthorizationCode: 60 },
    findAccount: (_context, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
  });
  server.on('request', provider.callback());

  const clientId = `peer-${randomUUID()}`;
  const clientSecret = randomUUID() + randomUUID();
  const metadata: AdapterPayload = {
    client_id: clientId,
    client_secret: clientSecret,
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types: ['code'],
    redirect_uris: [options.redirectUri],
    token_endpoint_auth_method: 'client_secret_basic',
    // Its one key is an Ed25519 one, as ours.
    id_token_signed_response_alg: 'EdDSA',
    scope,
  };
  await new adapter('Client').upsert(clientId, metadata, 0);
  const client = await provider.Client.find(clientId);
  if (client === undefined) throw new Error('the peer does not find its client');
  const grant = new provider.Grant({ accountId: 'C-1001', clientId });
  grant.addOIDCScope('offline_access');
  grant.addResourceScope(options.audience, scope);
  const grantId = await grant.save();
  const authTime = Math.floor(Date.now() / 1000);

  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    clientId,
    clientSecret,
    /** A code of the one grant, as its authorization endpoint stores it after consent. */
    mintCode(codeChallenge: string) {
      return new provider.AuthorizationCode({
        accountId: 'C-1001',
        client,
        grantId,
        scope: `offline_access ${scope}`,
        resource: options.audience,
        redirectUri: options.redirectUri,
        codeChallenge,
        codeChallengeMethod: 'S256',
        authTime,
        // @types/oidc-provider asks codes for a `gty`, which the provider gives only tokens.
      } as unknown as ConstructorParameters<typeof provider.AuthorizationCode>[0]).save();
    },
    /** A refresh token of the one grant, as its code exchange stores it. */
    mintRefreshToken() {
      return new provider.RefreshToken({
        accountId: 'C-1001',
        client,
        grantId,
        scope: `offline_access ${scope}`,
        resource: options.audience,
        gty: 'authorization_code',
        authTime,
        iiat: authTime,
        rotations: 0,
      }).save();
    },
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}
