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
 *
 * The grant from a known source while strangers have locked the client (dev/bench/known-source.ts)
 * is timed beside it, for a second client of the same customer, against its own floor: the same
 * secret check and sign around the known-source path's requests made bare.
 *
 * So is the `private_key_jwt` grant of a client of keys (dev/bench/key-grant.ts), against the
 * grant's floor with a key's work in place of the secret check: a jose jwtVerify of the
 * assertion and its jti's conditional UpdateItem.
 *
 * So is a protected call with a DPoP-bound token (dev/bench/dpop.ts): the authorizer's handler
 * and the protected function's proof check, against two jose verifies and one conditional write.
 *
 * So is the first grant of a secret's hour, which records the secret's last use
 * (dev/bench/last-use.ts), against the grant's floor with the store's own last-use write
 * (a conditional UpdateItem) beside the sign, as the grant runs it.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { createDynamoClientReader } from '../../lib/clients/dynamodb-readers.ts';
import { matchSecret, newClientSecret } from '../../lib/clients/secrets.ts';
import { readOAuthIntrospectConfig, readOAuthTokenConfig } from '../../lib/config.ts';
import { tableNames } from '../../lib/stage.ts';
import { clientCounterKey, knownSourceCounterKey, knownSourceTag } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import {
  ACCESS_TOKEN_TYPE,
  CLIENT_ID_CLAIM,
  CUSTOMER_CLAIM,
  SCOPE_CLAIM,
  SECRET_ID_CLAIM,
} from '../../lib/tokens/claims.ts';
import { createClientTokenIssuer } from '../../lib/tokens/issue.ts';
import {
  importSigningKey,
  importVerificationKeys,
  parseJwks,
  parseKeyring,
  SIGNING_ALGORITHM,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';
import { lambdaContext } from '../../tests/fixtures/events.ts';
import { bareClientAuthentication, storedSecrets } from './client-auth.ts';
import { type BareAttempt, bareCounters } from './counters.ts';
import { dpopVariants } from './dpop.ts';
import {
  BENCH_SOURCE,
  grant200,
  importAuthorizer,
  importOAuthIntrospect,
  importOAuthToken,
  introspectActive,
  introspectionEvent,
  tokenRequestEvent,
} from './handlers.ts';
import { assertedGrantEvent, assertionOf, keyCheck, seedKeyClient } from './key-grant.ts';
import { lockByStrangers } from './known-source.ts';
import { dueClients } from './last-use.ts';
import { interleaved, type Plan, type Variant } from './measure.ts';
import type { GrantResult } from './results.ts';
import { type BenchClient, benchStage } from './stage.ts';

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
    const counters = bareCounters(client, tables.loginThrottle);
    // A locked name of the floors' own, and the bench's source's tag for it, as the handler's.
    const lockedName = await counters.locked('FLOOR#LOCKED');
    const tag = knownSourceTag(lockedName, BENCH_SOURCE, stage.counterSecret);
    const own = knownSourceCounterKey(lockedName, tag);
    const bare = bareClientAuthentication({ client, accountsTable: tables.accounts, counters, tag });
    const { check } = bare;
    const readClient = (id = clientId) => bare.readClient(id);
    const secrets = storedSecrets((await readClient()).Item);
    if (secrets.length !== 2 || matchSecret(secret, secrets, new Date()) === null)
      throw new Error('the bench client does not hold two live secrets, the presented one among them');
    const colleague = stage.colleagueClient;
    const locked = await lockByStrangers({
      handler: oauthToken,
      store: createDynamoThrottleStore({ client, tableName: tables.loginThrottle }),
      nameKey: clientCounterKey(colleague.clientId, stage.counterSecret),
      counterSecret: stage.counterSecret,
      right: () => tokenRequestEvent(colleague),
      wrong: () =>
        tokenRequestEvent({ clientId: colleague.clientId, secret: newClientSecret(new Date()).secret }),
    });

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

    /** The client authentication made bare: the two steps, the secret check between them. */
    const authenticate = (of: BenchClient = stage.client) => bare.authenticate(of);
    /** The same from a known source of a locked client (dev/bench/counters.ts), then the sign. */
    const knownSourceFloor = async () => {
      const attempt: BareAttempt = { id: randomUUID(), at: Date.now() };
      const [read] = await Promise.all([
        readClient(colleague.clientId),
        counters.reserveKnownSource(lockedName, own, attempt, tag),
        counters.reserveAddress('FLOOR#IP', attempt),
      ]);
      const secretId = check(colleague.secret, read);
      await Promise.all([
        counters.succeedKnownSource(lockedName, own, attempt, tag),
        counters.release('FLOOR#IP', attempt),
      ]);
      await sign(secretId);
    };

    const floor = async () => {
      await sign((await authenticate()).secretId);
    };

    // private_key_jwt: a client of keys, a new assertion per call signed before its batch.
    const keyed = await seedKeyClient(client, tables.accounts);
    const keyChecked = keyCheck({
      client,
      sessionsTable: tables.sessions,
      issuer: config.tokens.issuer,
      of: keyed,
    });
    const assertions = (calls: number) =>
      Promise.all(Array.from({ length: calls }, () => assertionOf(keyed, config.tokens.issuer)));
    const keyGrantFloor = async (assertion: string) => {
      await sign((await bare.steps(keyed.clientId, () => keyChecked(assertion))).secretId);
    };
    let floorAssertions: string[] = [];
    {
      const answer = await oauthToken(
        assertedGrantEvent(await assertionOf(keyed, config.tokens.issuer)),
        lambdaContext(),
      );
      if (answer.statusCode !== 200)
        throw new Error(`the private_key_jwt grant answered ${answer.statusCode}: ${answer.body}`);
    }

    // The first grant of each secret's hour: one client of the pool per call of a batch.
    const due = await dueClients({
      client,
      tableName: tables.accounts,
      size: Math.max(options.plan.warmup, options.plan.calls),
    });
    const clients = createDynamoClientReader({ client, tableName: tables.accounts });
    /** The grant's floor with the store's own last-use write beside the sign, as the grant runs it. */
    const lastUseFloor = async (of: BenchClient) => {
      const { secretId, readAt } = await authenticate(of);
      const [, written] = await Promise.all([
        sign(secretId),
        clients.recordUse(of.clientId, secretId, readAt),
      ]);
      if (!written) throw new Error('the floor’s last-use write was refused: its last use was not due');
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

    // DPoP: a token of the bench client bound to a key, through the authorizer and the proof check.
    const dpop = await dpopVariants({
      client,
      sessionsTable: tables.sessions,
      authorizer: await importAuthorizer(),
      boundToken: async (jkt) =>
        (
          await createClientTokenIssuer({
            signingKey: async () => signingKey,
            settings: config.tokens,
          }).issue({
            clientId,
            grant: { secretId: String(claims[SECRET_ID_CLAIM]) },
            customerId: String(claims[CUSTOMER_CLAIM]),
            scopes: ['tracking:read'],
            issuedAt: Math.floor(Date.now() / 1000),
            jkt,
          })
        ).accessToken,
      verify: (token) => jwtVerify(token, verificationKey, verifyOptions),
    });

    const context = lambdaContext();
    /** The token handler on each batch's own events: the middleware chain rewrites their headers. */
    const grantVariant = <TName extends string>(
      name: TName,
      batchOf: (calls: number) => Promise<APIGatewayProxyEvent[]> | APIGatewayProxyEvent[],
    ): Variant<TName> => {
      let events: APIGatewayProxyEvent[] = [];
      return {
        name,
        prepare: async (calls) => {
          events = await batchOf(calls);
        },
        run: async (index) => {
          const event = events[index];
          if (event === undefined) throw new Error('no event prepared');
          const response = await oauthToken(event, context);
          if (response.statusCode !== 200) throw new Error(`${name} answered ${response.statusCode}`);
        },
      };
    };
    /** Copies of one grant's event for `of`. */
    const copies = (of: BenchClient) => {
      const template = tokenRequestEvent(of);
      return (calls: number) => Array.from({ length: calls }, () => structuredClone(template));
    };
    let lastUseFloorClients: readonly BenchClient[] = [];
    const samples = await interleaved(
      [
        grantVariant('grant', copies(stage.client)),
        {
          name: 'secretCheck',
          run: () => {
            if (matchSecret(secret, secrets, new Date()) === null) throw new Error('secret check failed');
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
        grantVariant('keyGrant', async (calls) => (await assertions(calls)).map(assertedGrantEvent)),
        {
          name: 'keyGrantFloor',
          prepare: async (calls) => {
            floorAssertions = await assertions(calls);
          },
          run: async (index) => {
            const assertion = floorAssertions[index];
            if (assertion === undefined) throw new Error('no assertion prepared');
            await keyGrantFloor(assertion);
          },
        },
        ...dpop,
        grantVariant('knownSourceGrant', copies(colleague)),
        { name: 'knownSourceFloor', run: knownSourceFloor },
        grantVariant('lastUseGrant', async (calls) => (await due.setBack(calls)).map(tokenRequestEvent)),
        {
          name: 'lastUseFloor',
          prepare: async (calls) => {
            lastUseFloorClients = await due.setBack(calls);
          },
          run: async (index) => {
            const of = lastUseFloorClients[index];
            if (of === undefined) throw new Error('no client prepared');
            await lastUseFloor(of);
          },
        },
      ],
      options.plan,
    );
    await locked.assertStillLocked();
    await due.assertRecorded();
    client.destroy();
    return { part: 'grant', samples };
  } finally {
    await stage.close();
  }
}
