/**
 * The `private_key_jwt` grant (docs/clients.md, "Keys instead of secrets") for the grant part
 * (dev/bench/grant.ts): a client of keys of alice's customer holding two Ed25519 keys, as during
 * a rotation, presenting an assertion signed by the second; a new assertion per call, signed
 * before the batch (an integrator signs its own). Its floor is the grant's, with the secret
 * check replaced by what a key costs: one jose jwtVerify of the assertion with the client's key
 * and the assertion's single-use write (the replay store's own conditional UpdateItem).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import * as v from 'valibot';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { ClientJwksSchema, keyCredentials } from '../../lib/clients/jwks.ts';
import { JWT_BEARER_ASSERTION } from '../../lib/clients/keys.ts';
import { TOKEN_PATH } from '../../lib/clients/metadata.ts';
import { ASSERTION_PREFIX, createDynamoReplayStore } from '../../lib/replay/dynamodb.ts';
import { GRANTABLE_SCOPES } from '../../lib/scopes.ts';
import { loginEvent } from '../../tests/fixtures/events.ts';

const KIDS = ['bench-1', 'bench-2'] as const;

/** A client of keys of alice's customer, two keys live; it signs with the second. */
export async function seedKeyClient(client: DynamoDBDocumentClient, tableName: string) {
  const pairs = await Promise.all(KIDS.map(() => generateKeyPair('EdDSA')));
  const jwks = v.parse(ClientJwksSchema, {
    keys: await Promise.all(
      pairs.map(async (pair, index) => ({ ...(await exportJWK(pair.publicKey)), kid: KIDS[index] })),
    ),
  });
  const keys = await keyCredentials(jwks, new Date());
  const clientId = newClientId();
  await createDynamoClientRepository({ client, tableName }).createClient({
    clientId,
    customerId: 'C-1001',
    scopes: GRANTABLE_SCOPES,
    keys,
  });
  const [, presented] = pairs;
  const [, presentedJwk] = jwks.keys;
  if (presented === undefined || presentedJwk === undefined) throw new Error('no second key');
  return {
    clientId,
    privateKey: presented.privateKey,
    publicKey: await importJWK(presentedJwk as JWK, 'EdDSA'),
    kid: KIDS[1],
    keyId: keys[1]?.id ?? '',
  };
}
export type KeyClient = Awaited<ReturnType<typeof seedKeyClient>>;

/** A new assertion of `of` for `issuer`, as a client library signs one per request. */
export const assertionOf = (of: KeyClient, issuer: string) =>
  new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'EdDSA', kid: of.kid })
    .setIssuer(of.clientId)
    .setSubject(of.clientId)
    .setAudience(issuer)
    .setIssuedAt()
    .setExpirationTime('1m')
    .sign(of.privateKey);

/** The grant's event with `assertion` in its form (RFC 7523 section 2.2), no Basic header. */
export function assertedGrantEvent(assertion: string): APIGatewayProxyEvent {
  const form = {
    grant_type: 'client_credentials',
    client_assertion_type: JWT_BEARER_ASSERTION,
    client_assertion: assertion,
  };
  const event = loginEvent(new URLSearchParams(form).toString(), {
    'Content-Type': 'application/x-www-form-urlencoded',
  });
  return {
    ...event,
    resource: TOKEN_PATH,
    path: TOKEN_PATH,
    requestContext: { ...event.requestContext, resourcePath: TOKEN_PATH, path: `/prod${TOKEN_PATH}` },
  };
}

/** What the key costs in the floor: the assertion verified as lib/clients/keys.ts does, and its jti spent. */
export function keyCheck(options: {
  readonly client: DynamoDBDocumentClient;
  readonly sessionsTable: string;
  readonly issuer: string;
  readonly of: KeyClient;
}) {
  const replay = createDynamoReplayStore(
    { client: options.client, tableName: options.sessionsTable },
    ASSERTION_PREFIX,
  );
  return async (assertion: string) => {
    const { payload } = await jwtVerify(assertion, options.of.publicKey, {
      algorithms: ['EdDSA'],
      issuer: options.of.clientId,
      subject: options.of.clientId,
      audience: options.issuer,
      requiredClaims: ['exp', 'jti'],
      clockTolerance: 5,
    });
    if (!(await replay.spend(options.of.clientId, String(payload.jti), Number(payload.exp), randomUUID())))
      throw new Error('the floor’s assertion was spent before');
    return options.of.keyId;
  };
}
