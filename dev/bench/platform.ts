/**
 * A platform's grants, warm (docs/platforms.md): the authorization code exchange and the
 * connection's refresh (functions/oauth-token.ts, form bodies with HTTP Basic), each against its
 * floor, and node-oidc-provider (dev/bench/peer.ts) side by side on the same embedded DynamoDB.
 *
 * The floors are the grants' work made bare: the client authentication's two DynamoDB steps
 * around the secret check (dev/bench/client-auth.ts), then the code exchange's three requests
 * through the stores' own calls (the code's conditional UpdateItem, the connection's GetItem,
 * the session's PutItem) or the refresh's jose jwtVerify of the refresh token and its two (the
 * connection's GetItem, the session's conditional UpdateItem), then the two signs of the access
 * and refresh tokens with the handler's headers and claims under the same key.
 *
 * The authentication made bare is timed alone too, beside the client's GetItem alone: their
 * difference is what the throttle's counting costs, which the peer does not do.
 *
 * Against the peer, both sides are timed over HTTP on loopback through the same client: ours
 * behind a bare node:http server (dev/bench/serve.ts), the peer's Koa app on node:http too, each
 * with its platform in DynamoDB and read on every request, for the client credentials grant,
 * the code exchange and the refresh. Each code and each refresh token is used once: every batch
 * has its own, minted before it as each side's authorization endpoint or code exchange stores
 * them.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { digestOf } from '../../lib/authorization/authorize.ts';
import { createDynamoAuthorizationStore } from '../../lib/authorization/dynamodb.ts';
import { CONNECTION_SESSION_PREFIX } from '../../lib/authorization/grants.ts';
import { challengeOf } from '../../lib/authorization/pkce.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { readOAuthTokenConfig } from '../../lib/config.ts';
import type { Connection } from '../../lib/connections/connections.ts';
import { createDynamoConnectionStore } from '../../lib/connections/dynamodb.ts';
import { GRANTABLE_SCOPES } from '../../lib/scopes.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { knownSourceTag } from '../../lib/throttle/counters.ts';
import { REFRESH_TOKEN_TYPE } from '../../lib/tokens/claims.ts';
import {
  importSigningKey,
  importVerificationKeys,
  parseJwks,
  parseKeyring,
  SIGNING_ALGORITHM,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';
import { basicCredentials, lambdaContext, tokenEvent } from '../../tests/fixtures/events.ts';
import { localDynamoClient } from '../local/dynalite.ts';
import { bareClientAuthentication } from './client-auth.ts';
import { bareCounters } from './counters.ts';
import { BENCH_SOURCE, type HttpHandler, importOAuthToken } from './handlers.ts';
import { interleaved, type Plan, type Variant } from './measure.ts';
import { createPeerTable, startPeer } from './peer.ts';
import type { PlatformResult } from './results.ts';
import { serveHandler } from './serve.ts';
import { type BenchClient, benchStage } from './stage.ts';

const PLATFORM_REDIRECT_URI = 'https://platform.example/callback';
/** The PKCE verifier of every code: 43 unreserved characters (RFC 7636 section 4.1). */
const VERIFIER = 'bench-verifier-bench-verifier-bench-verifier';
const CUSTOMER = 'C-1001';

/** A platform with every scope, connected to alice's customer; what mints its codes. */
async function seedPlatform(client: DynamoDBDocumentClient, tables: ReturnType<typeof tableNames>) {
  const { secret, stored } = newClientSecret(new Date());
  const clientId = newClientId();
  await createDynamoClientRepository({ client, tableName: tables.accounts }).createPlatform({
    clientId,
    name: 'Bench platform',
    scopes: GRANTABLE_SCOPES,
    redirectUris: [PLATFORM_REDIRECT_URI],
    secret: stored,
  });
  const connection: Connection = await createDynamoConnectionStore({
    client,
    tableName: tables.accounts,
  }).approve({
    clientId,
    customerId: CUSTOMER,
    scopes: GRANTABLE_SCOPES,
    approvedBy: 'alice',
    at: new Date(),
  });
  const codes = createDynamoAuthorizationStore({ client, tableName: tables.sessions });
  const platform: BenchClient = { clientId, secret };
  return {
    platform,
    connection,
    /** `count` codes of the connection, stored as the authorization page stores an approval's. */
    async mintCodes(count: number): Promise<string[]> {
      const now = Math.floor(Date.now() / 1000);
      return Promise.all(
        Array.from({ length: count }, async () => {
          const code = randomUUID() + randomUUID();
          await codes.createCode({
            digest: digestOf(code),
            clientId,
            redirectUri: PLATFORM_REDIRECT_URI,
            codeChallenge: challengeOf(VERIFIER),
            connectionId: connection.connectionId,
            customerId: CUSTOMER,
            scopes: GRANTABLE_SCOPES,
            approvedAt: now,
            expiresAt: now + 60,
          });
          return code;
        }),
      );
    },
  };
}

const codeForm = (code: string) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: PLATFORM_REDIRECT_URI,
  code_verifier: VERIFIER,
});
const refreshForm = (refreshToken: string) => ({ grant_type: 'refresh_token', refresh_token: refreshToken });

/** The token endpoint's event of `form` from `client` by HTTP Basic, from the bench's source. */
const platformEvent = (client: BenchClient, form: Record<string, string>): APIGatewayProxyEvent =>
  tokenEvent(form, { Authorization: basicCredentials(client.clientId, client.secret) }, BENCH_SOURCE);

/** Calls the token handler; throws unless it answers 200; the tokens. */
async function tokens200(handler: HttpHandler, event: APIGatewayProxyEvent) {
  const response = await handler(event, lambdaContext());
  const body = JSON.parse(response.body) as Record<string, unknown>;
  if (response.statusCode !== 200 || typeof body.access_token !== 'string')
    throw new Error(`expected 200 with tokens, got ${response.statusCode}: ${response.body}`);
  return { accessToken: body.access_token, refreshToken: String(body.refresh_token) };
}

const exchangeEvent = (platform: BenchClient, code: string) => platformEvent(platform, codeForm(code));
const refreshEvent = (platform: BenchClient, refreshToken: string) =>
  platformEvent(platform, refreshForm(refreshToken));

/** POSTs `form` to `url` as an OAuth library does; throws unless 200 with an access token. */
async function post200(url: string, client: BenchClient, form: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: basicCredentials(client.clientId, client.secret),
    },
    body: new URLSearchParams(form),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200 || typeof body.access_token !== 'string')
    throw new Error(`${url} answered ${response.status}: ${JSON.stringify(body)}`);
}

/** A variant that runs `call` on each of a batch's own inputs, made untimed before it. */
function perCall<TName extends string, TInput>(
  name: TName,
  make: (calls: number) => Promise<TInput[]>,
  call: (input: TInput) => Promise<unknown>,
): Variant<TName> {
  let inputs: TInput[] = [];
  return {
    name,
    prepare: async (calls) => {
      inputs = await make(calls);
    },
    run: (index) => {
      const input = inputs[index];
      if (input === undefined) throw new Error(`${name}: no input prepared`);
      return call(input);
    },
  };
}

export async function platformPart(options: { endpoint: string; plan: Plan }): Promise<PlatformResult> {
  const stage = await benchStage({ endpoint: options.endpoint });
  const client = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
  const tables = tableNames(stage.name);
  const seeded = await seedPlatform(client, tables);
  const { platform, connection } = seeded;
  const setup = localDynamoClient(options.endpoint);
  const peerTable = `${stage.name}-oidc-provider`;
  await createPeerTable(setup, peerTable);
  setup.destroy();
  const config = readOAuthTokenConfig();
  const peer = await startPeer({
    client,
    tableName: peerTable,
    audience: config.tokens.audience,
    scopes: GRANTABLE_SCOPES,
    redirectUri: PLATFORM_REDIRECT_URI,
    accessTtlSeconds: config.tokens.accessTtlSeconds,
    refreshTtlSeconds: config.tokens.refreshTtlSeconds,
  });
  const oauthToken = await importOAuthToken();
  const ours = await serveHandler(oauthToken);
  try {
    const codes = createDynamoAuthorizationStore({ client, tableName: tables.sessions });
    const connections = createDynamoConnectionStore({ client, tableName: tables.accounts });
    const sessions = createDynamoSessionStore({ client, tableName: tables.sessions });
    const counters = bareCounters(client, tables.loginThrottle);
    const lockedName = await counters.locked('FLOOR#LOCKED');
    const bare = bareClientAuthentication({
      client,
      accountsTable: tables.accounts,
      counters,
      tag: knownSourceTag(lockedName, BENCH_SOURCE, stage.counterSecret),
    });

    /** Refresh tokens of `count` fresh code exchanges of the handler (untimed). */
    const refreshTokens = async (count: number) => {
      const minted = await seeded.mintCodes(count);
      const issued: string[] = [];
      for (const code of minted)
        issued.push((await tokens200(oauthToken, exchangeEvent(platform, code))).refreshToken);
      return issued;
    };

    // What the handler signs: the same headers and claims, fresh times and ids, the same key.
    const [template] = await refreshTokens(1);
    const first = await tokens200(oauthToken, refreshEvent(platform, template ?? ''));
    const keyring = parseKeyring(await readFile(stage.keyringFile, 'utf8'));
    const signingKey = await importSigningKey(keyring.active);
    const resign = (token: string) => {
      const header = decodeProtectedHeader(token);
      const { iat = 0, exp = 0, ...claims }: JWTPayload = decodeJwt(token);
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ ...claims, jti: randomUUID() })
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: String(header.typ), kid: signingKey.kid })
        .setIssuedAt(now)
        .setExpirationTime(now + (exp - iat))
        .sign(signingKey.key);
    };
    const signBoth = () => Promise.all([resign(first.accessToken), resign(first.refreshToken)]);

    const verificationKey = (
      await importVerificationKeys(parseJwks(await readFile(stage.jwksFile, 'utf8')))
    ).get(signingKey.kid);
    if (verificationKey === undefined) throw new Error('the active key is not in the key set');
    const refreshOptions = {
      algorithms: [SIGNING_ALGORITHM],
      issuer: config.tokens.issuer,
      audience: config.tokens.issuer,
      typ: REFRESH_TOKEN_TYPE,
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      maxTokenAge: config.tokens.refreshTtlSeconds,
    };

    /** The code exchange made bare: authentication, the code's spend, the connection, the session, the signs. */
    const exchangeFloor = async (code: string) => {
      await bare.authenticate(platform);
      const now = new Date();
      const binding = {
        clientId: platform.clientId,
        redirectUri: PLATFORM_REDIRECT_URI,
        codeChallenge: challengeOf(VERIFIER),
      };
      const redemption = await codes.redeemCode(digestOf(code), binding, randomUUID(), now);
      if (redemption.outcome !== 'redeemed') throw new Error(`the floor's code was ${redemption.outcome}`);
      if ((await connections.find(platform.clientId, CUSTOMER)) === null) throw new Error('no connection');
      await sessions.create({
        sessionId: `${CONNECTION_SESSION_PREFIX}${randomUUID()}`,
        username: `connection:${connection.connectionId}`,
        createdAt: redemption.code.approvedAt,
        expiresAt: Math.floor(now.getTime() / 1000) + config.connections.maxLifetimeSeconds,
        currentJti: randomUUID(),
      });
      await signBoth();
    };
    /** The refresh made bare: authentication, the verify, the connection, the rotation, the signs. */
    const refreshFloor = async (refreshToken: string) => {
      await bare.authenticate(platform);
      const { payload } = await jwtVerify(refreshToken, verificationKey, refreshOptions);
      if ((await connections.find(platform.clientId, CUSTOMER)) === null) throw new Error('no connection');
      const now = new Date();
      const rotated = await sessions.refresh({
        sessionId: String(payload.sid),
        username: `connection:${connection.connectionId}`,
        fromJti: String(payload.jti),
        toJti: randomUUID(),
        now,
        extendTo: Math.floor(now.getTime() / 1000) + config.connections.maxLifetimeSeconds,
      });
      if (rotated === null) throw new Error('the floor’s rotation lost');
      await signBoth();
    };

    const peerClient: BenchClient = { clientId: peer.clientId, secret: peer.clientSecret };
    const scope = GRANTABLE_SCOPES.join(' ');
    const challenge = challengeOf(VERIFIER);
    const samples = await interleaved(
      [
        perCall('exchange', seeded.mintCodes, (code) => tokens200(oauthToken, exchangeEvent(platform, code))),
        perCall('exchangeFloor', seeded.mintCodes, exchangeFloor),
        perCall('refresh', refreshTokens, (token) => tokens200(oauthToken, refreshEvent(platform, token))),
        perCall('refreshFloor', refreshTokens, refreshFloor),
        // What the throttle's counting costs: the authentication made bare, less its read alone.
        { name: 'authentication', run: () => bare.authenticate(platform) },
        { name: 'clientRead', run: () => bare.readClient(platform.clientId) },
        {
          name: 'httpClientCredentials',
          run: () =>
            post200(`${ours.url}/api/v1/oauth/token`, stage.client, {
              grant_type: 'client_credentials',
              scope,
            }),
        },
        {
          name: 'peerClientCredentials',
          run: () => post200(peer.tokenEndpoint, peerClient, { grant_type: 'client_credentials', scope }),
        },
        perCall('httpExchange', seeded.mintCodes, (code) =>
          post200(`${ours.url}/api/v1/oauth/token`, platform, codeForm(code)),
        ),
        perCall(
          'peerExchange',
          (calls) => Promise.all(Array.from({ length: calls }, () => peer.mintCode(challenge))),
          (code) => post200(peer.tokenEndpoint, peerClient, codeForm(code)),
        ),
        perCall('httpRefresh', refreshTokens, (token) =>
          post200(`${ours.url}/api/v1/oauth/token`, platform, refreshForm(token)),
        ),
        perCall(
          'peerRefresh',
          (calls) => Promise.all(Array.from({ length: calls }, () => peer.mintRefreshToken())),
          (token) => post200(peer.tokenEndpoint, peerClient, refreshForm(token)),
        ),
      ],
      options.plan,
    );
    return { part: 'platform', samples };
  } finally {
    await ours.close();
    await peer.close();
    client.destroy();
    await stage.close();
  }
}
