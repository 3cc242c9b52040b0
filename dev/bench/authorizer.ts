/**
 * The warm authorizer against its baselines, on the same token and key: bare jose
 * `jwtVerify` with the options lib/tokens/verify.ts pins; the same verify followed by the
 * EMF line an allowed call writes (its two counts, through the same Powertools adapter to the
 * same stdout), the least work the design must do per call; and the floor, a bare
 * node:crypto Ed25519 verify of the token's signing input.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { readAuthorizerConfig } from '../../lib/config.ts';
import { logger } from '../../lib/log.ts';
import { createEmfMetrics } from '../../lib/metrics/powertools.ts';
import { ACCESS_TOKEN_TYPE } from '../../lib/tokens/claims.ts';
import { importVerificationKeys, parseJwks, SIGNING_ALGORITHM } from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';
import { authorizerEvent, lambdaContext } from '../../tests/fixtures/events.ts';
import { call200, credentialsBody, importAuthorizer, importLogin } from './handlers.ts';
import { interleaved, type Plan } from './measure.ts';
import type { AuthorizerResult } from './results.ts';
import { benchStage, PASSWORD } from './stage.ts';

export async function authorizerPart(options: {
  endpoint: string;
  revocationCacheTtl: string;
  plan: Plan;
}): Promise<AuthorizerResult> {
  const stage = await benchStage({
    endpoint: options.endpoint,
    // The login only mints the token; its cost does not matter here.
    env: { REVOCATION_CACHE_TTL: options.revocationCacheTtl, BCRYPT_COST: '4' },
  });
  try {
    const login = await importLogin();
    const authorizer = await importAuthorizer();
    const { token } = await call200(login, credentialsBody('alice', PASSWORD));
    if (typeof token !== 'string') throw new Error('login answered without a token');

    const event = authorizerEvent(`Bearer ${token}`);
    const context = lambdaContext();

    const config = readAuthorizerConfig();
    const jwks = parseJwks(await readFile(stage.jwksFile, 'utf8'));
    const { kid } = decodeProtectedHeader(token);
    const key = kid === undefined ? undefined : (await importVerificationKeys(jwks)).get(kid);
    const jwk = jwks.keys.find((candidate) => candidate.kid === kid);
    if (key === undefined || jwk === undefined) throw new Error('the token’s kid is not in the key set');
    const verifyOptions = {
      algorithms: [SIGNING_ALGORITHM],
      issuer: config.tokens.issuer,
      audience: config.tokens.audience,
      typ: ACCESS_TOKEN_TYPE,
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      maxTokenAge: config.tokens.accessTtlSeconds,
    };

    const [header = '', payload = '', signature = ''] = token.split('.');
    const signingInput = Buffer.from(`${header}.${payload}`);
    const signatureBytes = Buffer.from(signature, 'base64url');
    const metrics = createEmfMetrics({ stage: config.stage, logger });
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });

    const samples = await interleaved(
      [
        {
          name: 'handler',
          run: async () => {
            const result = await authorizer(event, context);
            if (result.policyDocument.Statement[0]?.Effect !== 'Allow') throw new Error('not allowed');
          },
        },
        { name: 'jose', run: () => jwtVerify(token, key, verifyOptions) },
        {
          name: 'joseMetrics',
          run: async () => {
            await jwtVerify(token, key, verifyOptions);
            metrics.count({ name: 'RevocationCacheHit' });
            metrics.count({ name: 'AuthorizerAllow' });
            metrics.flush();
          },
        },
        {
          name: 'floor',
          run: () => {
            if (!verify(null, signingInput, publicKey, signatureBytes)) throw new Error('bad signature');
          },
        },
      ],
      options.plan,
    );
    const { handler, jose, joseMetrics, floor } = samples;
    return {
      part: 'authorizer',
      revocationCacheTtl: options.revocationCacheTtl,
      samples: { handler, jose, joseMetrics, floor },
    };
  } finally {
    await stage.close();
  }
}
