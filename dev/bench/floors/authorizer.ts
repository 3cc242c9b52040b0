/**
 * The authorizer's floor, for the benchmark only: the least any authorizer must ship and do
 * that verifies an EdDSA access token with jose and reads the user's revocation state with
 * one DynamoDB document-client GetItem. No configuration schema, no logger, no cache, no
 * key reload, no WebCrypto warm-up. dev/bench/bundles.ts builds it with serverless.yml's
 * esbuild options, so its size and cold start are what the real authorizer is measured
 * against (docs/PERFORMANCE.md). It reads the environment the real authorizer gets.
 *
 * Built three times: as it stands (`FLOOR_SSM` defined as "true"), it also reads the key set
 * from SSM when VERIFICATION_KEYS says `ssm:`, as every AWS stage does, with the SSM client
 * loaded only then, as lib/tokens/keys.ts loads it; with `FLOOR_SSM` "false" the minifier drops
 * that branch and the SSM client with it: jose and GetItem alone. With `FLOOR_LOGS` "true" it
 * also keeps what the authorizer must not lose, with the stack's own tools: a log line for a
 * refusal (Powertools Logger) and the EMF line of its two counts (Powertools Metrics), as the
 * warm floor's "jose + the EMF line".
 */
import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createDocumentClient } from '../../../lib/aws/dynamodb.ts';

const env = process.env;
const source = String(env.VERIFICATION_KEYS);
async function keySet(): Promise<string> {
  if (process.env.FLOOR_SSM === 'true' && source.startsWith('ssm:')) {
    const { readParameter } = await import('./ssm.ts');
    return readParameter(source.slice('ssm:'.length));
  }
  return readFileSync(source.replace(/^file:/, ''), 'utf8');
}
const keys = createLocalJWKSet(JSON.parse(await keySet()));
const client = createDocumentClient({
  region: env.AWS_REGION ?? 'eu-central-1',
  dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
});

const logs =
  process.env.FLOOR_LOGS === 'true'
    ? { logger: new Logger({ serviceName: 'floor' }), metrics: new Metrics({ namespace: 'floor' }) }
    : undefined;

export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  try {
    return await decide(event);
  } catch (error) {
    logs?.logger.info('authorizer denied', { reason: String(error) });
    throw error;
  } finally {
    logs?.metrics.addMetric('AuthorizerAllow', MetricUnit.Count, 1);
    logs?.metrics.addMetric('RevocationCacheHit', MetricUnit.Count, 1);
    logs?.metrics.publishStoredMetrics();
  }
}

async function decide(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const token = /^Bearer (\S+)$/.exec(event.headers?.Authorization ?? '')?.[1];
  if (token === undefined) throw new Error('Unauthorized');
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ['EdDSA'],
    issuer: env.TOKEN_ISSUER,
    audience: env.TOKEN_AUDIENCE,
    typ: 'at+jwt',
  });
  const username = String(payload.sub);
  const { Item } = await client.send(
    new GetCommand({
      TableName: env.ACCOUNTS_TABLE,
      // lib/accounts/dynamodb-items.ts's user key, with foldUsername()'s expression copied: importing it
      // would bring lib/accounts/repository.ts's valibot schemas into the floor.
      Key: {
        pk: `USER#${username.normalize('NFKD').toLowerCase().toUpperCase().toLowerCase().normalize('NFKC')}`,
        sk: 'USER',
      },
      ProjectionExpression: 'username, enabled, revokedBefore',
    }),
  );
  if (Item?.enabled !== true || Number(Item.revokedBefore ?? 0) > Number(payload.iat)) {
    throw new Error('Unauthorized');
  }
  return {
    principalId: username,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
  };
}
