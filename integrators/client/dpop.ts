/**
 * DPoP (RFC 9449): the proof a client of a key pair signs for each request, with WebCrypto alone,
 * so that its tokens are bound to the key and a copied token calls nothing (docs/clients.md,
 * "Tokens bound to a key"). Ed25519, ECDSA P-256 and RSA-PSS SHA-256 keys, as assertions.
 */
import { algorithmOf, base64url, encodeJson, type SigningKey } from './assertion.ts';

/** A WebCrypto key pair; the public key must be extractable (the proof carries it as a JWK). */
export interface DpopKeys {
  readonly privateKey: SigningKey;
  readonly publicKey: SigningKey;
}

/** The members of a public JWK that name the key (RFC 7638), without WebCrypto's `key_ops` and `ext`. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e'] as const;

const publicJwks = new WeakMap<object, Record<string, string>>();

async function publicJwkOf(keys: DpopKeys): Promise<Record<string, string>> {
  const known = publicJwks.get(keys.publicKey as object);
  if (known !== undefined) return known;
  const exported = (await crypto.subtle.exportKey('jwk', keys.publicKey as CryptoKeyLike)) as Record<
    string,
    unknown
  >;
  const jwk = Object.fromEntries(
    PUBLIC_MEMBERS.filter((name) => typeof exported[name] === 'string').map((name) => [name, exported[name]]),
  ) as Record<string, string>;
  publicJwks.set(keys.publicKey as object, jwk);
  return jwk;
}
type CryptoKeyLike = Parameters<typeof crypto.subtle.exportKey>[1];

/** The SHA-256 of an access token, base64url: a proof's `ath`. */
export const accessTokenHash = async (token: string) =>
  base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))));

/** A new proof for `method` on `url` (its query and fragment dropped), with `accessToken`'s `ath` if given. */
export async function signProof(
  keys: DpopKeys,
  request: { readonly method: string; readonly url: URL; readonly accessToken?: string },
  nowMs: number,
): Promise<string> {
  const { alg, params } = algorithmOf(keys.privateKey);
  const htu = new URL(request.url);
  htu.search = '';
  htu.hash = '';
  const header = encodeJson({ alg, typ: 'dpop+jwt', jwk: await publicJwkOf(keys) });
  const payload = encodeJson({
    jti: crypto.randomUUID(),
    htm: request.method,
    htu: htu.href,
    iat: Math.floor(nowMs / 1000),
    ...(request.accessToken !== undefined && { ath: await accessTokenHash(request.accessToken) }),
  });
  const signed = `${header}.${payload}`;
  const signature = await crypto.subtle.sign(params, keys.privateKey, new TextEncoder().encode(signed));
  return `${signed}.${base64url(new Uint8Array(signature))}`;
}
