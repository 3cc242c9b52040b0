/**
 * The warm client credentials grant (functions/oauth-token.ts on a form-body event with HTTP
 * Basic credentials) against its floor: the secret check (matchSecret: SHA-256 of the presented
 * secret, compared with the client's two stored digests) between the grant's two DynamoDB steps
 * made bare (the same five requests on the same client settings, the counters' through the
 * throttle's own store: before the check, the client's consistent GetItem and an UpdateItem of
 * each attempt counter in parallel; after it, an UpdateItem of each counter in parallel), then
 * one jose sign of a token with the grant's header and claims under the same key.
 * The secret check, one GetItem and the sign are timed alone too.
 *
 * Token introspection (functions/oauth-introspect.ts, the grant's token, active) authenticates
 * the client the same way, then verifies the token as the authorizer does and reads its
 * client's state, which the production revocation cache (30 s) keeps between calls: its floor
 * is the same two steps and secret check, then one jose jwtVerify with the authorizer's options.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { type ClientSecret, matchSecret } from '../../lib/clients/clients.ts';
import { clientKey } from '../../lib/clients/dynamodb.ts';
import { readOAuthIntrospectConfig, readOAuthTokenConfig } from '../../lib/config.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { counterPeriod } from '../../lib/throttle/throttle.ts';
import {
  ACCESS_TOKEN_TYPE,
  CLIENT_ID_CLAIM,
  CUSTOMER_CLAIM,
  SCOPE_CLAIM,
  SECRET_ID_CLAIM,
} from '../../lib/tokens/claims.ts';
import {
  importSigningKey,
  importVerificationKeys,
  parseJwks,
  parseKeyring,
  SIGNING_ALGORITHM,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';
import { lambdaContext } from '../../tests/fixtures/events.ts';
import {
  grant200,
  importOAuthIntrospect,
  importOAuthToken,
  introspectActive,
  introspectionEvent,
  tokenRequestEvent,
} from './handlers.ts';
import { interleaved, type Plan } from './measure.ts';
import type { GrantResult } from './results.ts';
import { benchStage } from './stage.ts';

/** The live secrets of a client item as stored: a map by secret id. */
function storedSecrets(item: Record<string, unknown> | undefined): ClientSecret[] {
  const map = (item?.secrets ?? {}) as Record<string, { digest: string; createdAt: string }>;
  return Object.entries(map).map(([id, { digest, createdAt }]) => ({ id, digest, createdAt }));
}

const sameNames = (a: object, b: object) =>
  JSON.stringify(Object.keys(a).sort()) === JSON.stringify(Object.keys(b).sort());

export async function grantPart(options: { endpoint: string; plan: Plan }): Promise<GrantResult> {
  const stage = await benchStage({ endpoint: options.endpoint });
  try {
    const oauthToken = await importOAuthToken();
    const { clientId, secret } = stage.client;
    const issued = await grant200(oauthToken, stage.client);

    const config = readOAuthTokenConfig();
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
    const tables = tableNames(stage.name);
    const readClient = () =>
      client.send(
        new GetCommand({ TableName: tables.accounts, Key: clientKey(clientId), ConsistentRead: true }),
      );
    const secrets = storedSecrets((await readClient()).Item);
    if (secrets.length !== 2 || matchSecret(secret, secrets) === null)
      throw new Error('the bench client does not hold two live secrets, the presented one among them');

    // The token the grant signs: the same header and claims, fresh times and jti, the same key.
    const { kid } = decodeProtectedHeader(issued);
    const claims = decodeJwt(issued);
    const keyring = parseKeyring(await readFile(stage.keyringFile, 'utf8'));
    const signingKey = await importSigningKey(keyring.active);
    if (signingKey.kid !== kid) throw new Error('the grant signed with a key other than the active one');
    const sign = (secretId: string) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        [CLIENT_ID_CLAIM]: claims[CLIENT_ID_CLAIM],
        [SCOPE_CLAIM]: claims[SCOPE_CLAIM],
        [CUSTOMER_CLAIM]: claims[CUSTOMER_CLAIM],
        [SECRET_ID_CLAIM]: secretId,
      })
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid: signingKey.kid })
        .setIssuer(config.tokens.issuer)
        .setAudience(config.tokens.audience)
        .setSubject(clientId)
        .setIssuedAt(now)
        .setExpirationTime(now + config.tokens.accessTtlSeconds)
        .setJti(randomUUID())
        .sign(signingKey.key);
    };
    const floorToken = await sign('00000000');
    if (
      !sameNames(decodeProtectedHeader(floorToken), decodeProtectedHeader(issued)) ||
      !sameNames(decodeJwt(floorToken), decodeJwt(issued))
    ) {
      throw new Error('the floor signs a token unlike the grant’s: compare their header and claims');
    }

    // The counters' requests exactly as the grant sends them (lib/throttle/dynamodb.ts).
    const counters = createDynamoThrottleStore({ client, tableName: tables.loginThrottle });
    const reserve = (counterKey: string, now: number, attempt: string) =>
      counters.reserve(counterKey, {
        now,
        windowStart: now - 86_400_000,
        limit: 1_000_000,
        heldSince: now - 30_000,
        expiresAt: Math.ceil(now / 1000) + 86_400,
        attempt,
      });
    /** The client authentication made bare: the two steps, the secret check between them. */
    const authenticate = async () => {
      const now = Date.now();
      const attempt = randomUUID();
      const [read] = await Promise.all([
        readClient(),
        reserve('FLOOR#CLIENT', now, attempt),
        reserve('FLOOR#IP', now, attempt),
      ]);
      const secretId = matchSecret(secret, storedSecrets(read.Item));
      if (secretId === null) throw new Error('secret check failed');
      const period = counterPeriod(now, now - 86_400_000);
      await Promise.all([
        counters.reset('FLOOR#CLIENT', period),
        counters.release('FLOOR#IP', attempt, period, false),
      ]);
      return secretId;
    };

    const floor = async () => {
      await sign(await authenticate());
    };

    // The authorizer's verification of the grant's token, with the options lib/tokens/verify.ts pins.
    const introspection = readOAuthIntrospectConfig();
    const jwks = parseJwks(await readFile(stage.jwksFile, 'utf8'));
    const verificationKey = (await importVerificationKeys(jwks)).get(kid ?? '');
    if (verificationKey === undefined) throw new Error('the grant’s kid is not in the key set');
    const { tokens } = introspection;
    const verifyOptions = {
      algorithms: [SIGNING_ALGORITHM],
      issuer: [tokens.issuer, ...tokens.formerIssuers],
      audience: tokens.audience,
      typ: ACCESS_TOKEN_TYPE,
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      maxTokenAge: Math.max(tokens.accessTtlSeconds, tokens.clientAccessTtlSeconds),
    };
    const verify = () => jwtVerify(issued, verificationKey, verifyOptions);
    const introspectFloor = async () => {
      await authenticate();
      await verify();
    };
    const oauthIntrospect = await importOAuthIntrospect();
    // Active, and its client's state in the revocation cache from here on.
    await introspectActive(oauthIntrospect, stage.client, issued);
    const introspectTemplate = introspectionEvent(stage.client, issued);
    let introspectEvents: APIGatewayProxyEvent[] = [];

    const template = tokenRequestEvent(stage.client);
    const context = lambdaContext();
    let events: APIGatewayProxyEvent[] = [];
    const samples = await interleaved(
      [
        {
          // Fresh copies: the middleware chain rewrites the event's headers.
          name: 'grant',
          prepare: (calls) => {
            events = Array.from({ length: calls }, () => structuredClone(template));
          },
          run: async (index) => {
            const event = events[index];
            if (event === undefined) throw new Error('no event prepared');
            const response = await oauthToken(event, context);
            if (response.statusCode !== 200) throw new Error(`the grant answered ${response.statusCode}`);
          },
        },
        {
          name: 'secretCheck',
          run: () => {
            if (matchSecret(secret, secrets) === null) throw new Error('secret check failed');
          },
        },
        {
          name: 'getItem',
          run: async () => {
            if ((await readClient()).Item === undefined) throw new Error('the client is gone');
          },
        },
        { name: 'sign', run: () => sign('00000000') },
        { name: 'floor', run: floor },
        {
          name: 'introspect',
          prepare: (calls) => {
            introspectEvents = Array.from({ length: calls }, () => structuredClone(introspectTemplate));
          },
          run: async (index) => {
            const event = introspectEvents[index];
            if (event === undefined) throw new Error('no event prepared');
            const response = await oauthIntrospect(event, context);
            if (response.statusCode !== 200 || !response.body.startsWith('{"active":true'))
              throw new Error(`the introspection answered ${response.statusCode}: ${response.body}`);
          },
        },
        { name: 'verify', run: verify },
        { name: 'introspectFloor', run: introspectFloor },
      ],
      options.plan,
    );
    client.destroy();
    return { part: 'grant', samples };
  } finally {
    await stage.close();
  }
}
