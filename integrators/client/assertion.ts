/**
 * `private_key_jwt` (RFC 7523 section 2.2): the client assertion a client of keys signs for each
 * token request, with WebCrypto alone (no library): `iss` and `sub` the client id, `aud` the
 * service's issuer, a fresh `jti`, valid for 60 seconds. The service takes Ed25519 (`EdDSA`),
 * ECDSA P-256 (`ES256`) and RSA-PSS (`PS256`) keys (docs/clients.md, "Keys instead of secrets").
 */

/** WebCrypto's key and algorithm types, as the platform's `crypto.subtle.sign` declares them. */
export type SigningKey = Parameters<typeof crypto.subtle.sign>[1];
type SigningAlgorithm = Parameters<typeof crypto.subtle.sign>[0];

/** What signs the assertion: the private key, the `kid` the service knows its public key by, and the issuer. */
export interface AssertionKey {
  readonly clientId: string;
  /** A WebCrypto private key: Ed25519, ECDSA on P-256, or RSA-PSS with SHA-256. */
  readonly privateKey: SigningKey;
  /** The `kid` of its public key as registered; without it the service tries each of the client's keys. */
  readonly kid?: string;
  /** The `issuer` of the service's metadata (`/.well-known/oauth-authorization-server`). */
  readonly issuer: string;
}

/** How long an assertion is good for: the service takes at most five minutes. */
const LIFETIME_SECONDS = 60;

export const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
export const encodeJson = (value: unknown) => base64url(new TextEncoder().encode(JSON.stringify(value)));

/** The JWS algorithm of a key, and the WebCrypto parameters that sign with it. */
export function algorithmOf(key: SigningKey): { readonly alg: string; readonly params: SigningAlgorithm } {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  const { name } = algorithm;
  if (name === 'Ed25519') return { alg: 'EdDSA', params: { name } };
  if (name === 'ECDSA' && algorithm.namedCurve === 'P-256')
    return { alg: 'ES256', params: { name, hash: 'SHA-256' } };
  if (name === 'RSA-PSS' && algorithm.hash?.name === 'SHA-256')
    return { alg: 'PS256', params: { name, saltLength: 32 } };
  throw new TypeError('privateKey must be an Ed25519, ECDSA P-256 or RSA-PSS SHA-256 private key');
}

/** A new assertion of `key` at `nowMs` (this client's clock). */
export async function signAssertion(key: AssertionKey, nowMs: number): Promise<string> {
  const { alg, params } = algorithmOf(key.privateKey);
  const iat = Math.floor(nowMs / 1000);
  const header = encodeJson({ alg, typ: 'JWT', ...(key.kid !== undefined && { kid: key.kid }) });
  const payload = encodeJson({
    iss: key.clientId,
    sub: key.clientId,
    aud: key.issuer,
    jti: crypto.randomUUID(),
    iat,
    exp: iat + LIFETIME_SECONDS,
  });
  const signed = `${header}.${payload}`;
  const signature = await crypto.subtle.sign(params, key.privateKey, new TextEncoder().encode(signed));
  return `${signed}.${base64url(new Uint8Array(signature))}`;
}
