/**
 * A protected call with a DPoP-bound token (docs/clients.md, "Tokens bound to a key") for the
 * grant part (dev/bench/grant.ts): the authorizer's handler on `Authorization: DPoP <token>`
 * (its decision, the client's state in the revocation cache), then the protected function's
 * check of the call's proof (lib/dpop/binding.ts checkProtectedCall, its jti spent on the
 * embedded DynamoDB), a new proof per call signed before the batch (the client signs its own).
 * Its floor: the least the design must do per call, made bare: one jose jwtVerify of the token
 * with the authorizer's pinned options, one jose jwtVerify of the proof with its embedded key,
 * and the proof's jti spent by one conditional UpdateItem.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  exportJWK,
  generateKeyPair,
  type JWK,
  type JWTVerifyOptions,
  jwtVerify,
  SignJWT,
} from 'jose';
import { checkProtectedCall } from '../../lib/dpop/binding.ts';
import { accessTokenHash, DPOP_PROOF_TYPE } from '../../lib/dpop/proof.ts';
import { createDynamoReplayStore, DPOP_PREFIX } from '../../lib/replay/dynamodb.ts';
import { authorizerEvent, lambdaContext } from '../../tests/fixtures/events.ts';
import type { AuthorizerHandler } from './handlers.ts';
import type { Variant } from './measure.ts';

/** The URL the proofs are for: a tracking call, as the protected function computes it. */
const CALL_URL = 'https://api.bench.example/prod/api/v1/tracking/12345678901234';

export async function dpopVariants(options: {
  readonly client: DynamoDBDocumentClient;
  readonly sessionsTable: string;
  readonly authorizer: AuthorizerHandler;
  /** Signs the client's token bound to `jkt` (the grant's issuer, same key). */
  readonly boundToken: (jkt: string) => Promise<string>;
  readonly verify: (token: string) => ReturnType<typeof jwtVerify>;
}): Promise<readonly [Variant<'dpopCall'>, Variant<'dpopFloor'>]> {
  const keys = await generateKeyPair('ES256');
  const jwk = await exportJWK(keys.publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  const token = await options.boundToken(jkt);
  const ath = accessTokenHash(token);
  const proofs = (calls: number) =>
    Promise.all(
      Array.from({ length: calls }, () =>
        new SignJWT({ jti: randomUUID(), htm: 'GET', htu: CALL_URL, ath })
          .setProtectedHeader({ alg: 'ES256', typ: DPOP_PROOF_TYPE, jwk })
          .setIssuedAt()
          .sign(keys.privateKey),
      ),
    );
  const replay = createDynamoReplayStore(
    { client: options.client, tableName: options.sessionsTable },
    DPOP_PREFIX,
  );
  const event = authorizerEvent(`DPoP ${token}`);
  const context = lambdaContext();
  const proofOptions: JWTVerifyOptions = {
    algorithms: ['ES256'],
    typ: DPOP_PROOF_TYPE,
    requiredClaims: ['jti', 'htm', 'htu', 'iat'],
  };
  let callProofs: string[] = [];
  let floorProofs: string[] = [];
  const proofAt = (batch: readonly string[], index: number) => {
    const proof = batch[index];
    if (proof === undefined) throw new Error('no proof prepared');
    return proof;
  };
  return [
    {
      name: 'dpopCall',
      prepare: async (calls) => {
        callProofs = await proofs(calls);
      },
      run: async (index) => {
        const decision = await options.authorizer(structuredClone(event), context);
        const passed = decision.context?.jkt;
        if (decision.policyDocument.Statement[0]?.Effect !== 'Allow' || passed !== jkt)
          throw new Error('the authorizer did not allow the bound token with its jkt');
        await checkProtectedCall(
          { replay },
          {
            authorization: `DPoP ${token}`,
            dpop: [proofAt(callProofs, index)],
            method: 'GET',
            url: () => CALL_URL,
            jkt: passed,
            now: new Date(),
          },
        );
      },
    },
    {
      name: 'dpopFloor',
      prepare: async (calls) => {
        floorProofs = await proofs(calls);
      },
      run: async (index) => {
        await options.verify(token);
        const { payload, protectedHeader } = await jwtVerify(
          proofAt(floorProofs, index),
          EmbeddedJWK,
          proofOptions,
        );
        if (payload.ath !== ath || (await calculateJwkThumbprint(protectedHeader.jwk as JWK)) !== jkt)
          throw new Error('the floor’s proof is not of the token’s key');
        if (!(await replay.spend(jkt, String(payload.jti), Number(payload.iat) + 120, randomUUID())))
          throw new Error('the floor’s proof was spent before');
      },
    },
  ];
}
