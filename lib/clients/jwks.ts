/**
 * A client's JWK Set as it registers one (docs/clients.md, "Keys instead of secrets"): one key,
 * or two for a rotation (a key takes a secret's slot, MAX_LIVE_SECRETS), no kid twice; and its
 * keys as a new client's credentials. Apart from keys.ts and secrets.ts, so that what reads a
 * client item (the authorizer) carries neither the schemas nor the verification.
 */
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { ClientJwkSchema, clientKeyOf } from './keys.ts';
import { type ClientSecret, MAX_LIVE_SECRETS } from './secrets.ts';

/** A JWK Set a client registers: one key, or two for a rotation; no `kid` twice. */
export const ClientJwksSchema = v.pipe(
  v.strictObject({
    keys: v.pipe(
      v.array(ClientJwkSchema),
      v.minLength(1, 'must hold a key'),
      v.maxLength(MAX_LIVE_SECRETS, `must hold at most ${MAX_LIVE_SECRETS} keys`),
    ),
  }),
  v.check(
    ({ keys }) => new Set(keys.map((key) => key.kid)).size === keys.length,
    'must not name two keys with one kid, or two keys without one',
  ),
);

export type ClientJwks = v.InferOutput<typeof ClientJwksSchema>;

/** A JWK Set's keys as a new client's credentials: each in a slot of its own, id'd as a secret (8 hex digits). */
export const keyCredentials = async (jwks: ClientJwks, now: Date): Promise<ClientSecret[]> =>
  Promise.all(
    jwks.keys.map(async (jwk) => ({
      id: randomBytes(4).toString('hex'),
      digest: '',
      key: await clientKeyOf(jwk),
      createdAt: now.toISOString(),
    })),
  );
