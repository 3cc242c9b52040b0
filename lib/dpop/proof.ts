/**
 * DPoP (RFC 9449; docs/clients.md, "Tokens bound to a key"): a client proves, with every request,
 * that it holds the private key its access token is bound to. A proof is a JWT it signs for one
 * request, with the public key in its header: the method (`htm`), the URL without query and
 * fragment (`htu`), when (`iat`), an id never used before (`jti`) and, beside an access token,
 * the token's SHA-256 (`ath`). The binding is the key's RFC 7638 thumbprint, the token's `cnf.jkt`.
 * Proofs of EdDSA, ES256 and PS256 only, as client assertions (lib/clients/keys.ts). No nonces
 * (section 8): `iat` within DPOP_IAT_WINDOW_SECONDS and the spent `jti`s bound a proof's use.
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, type JWK, jwtVerify } from 'jose';
import { ASSERTION_ALGORITHMS } from '../clients/algorithms.ts';
import { AppError } from '../errors.ts';
import type { ReplayStore } from '../replay/replay.ts';
import { epochSeconds } from '../time.ts';

export const DPOP_PROOF_TYPE = 'dpop+jwt';
/** The metadata's `dpop_signing_alg_values_supported`. */
export const DPOP_ALGORITHMS = ASSERTION_ALGORITHMS;
/** How far a proof's `iat` may be from now, either way (section 11.1: "a few seconds to a minute"). */
export const DPOP_IAT_WINDOW_SECONDS = 60;
/** An RSA key of 4096 bits in the header fits; longer is no proof we take. */
export const MAX_PROOF_LENGTH = 4096;
/** As an assertion's (lib/clients/keys.ts): any `jti` a library makes, none that costs us to keep. */
const MAX_JTI_LENGTH = 256;
/** A spent `jti` is kept until no proof of that `iat` could be taken, and a minute more. */
const KEPT_AFTER_WINDOW_SECONDS = 60;

/** What a checked proof binds: the key's thumbprint, and the proof's id and time for the replay store. */
export interface DpopProof {
  readonly jkt: string;
  readonly jti: string;
  readonly iat: number;
}

export interface ExpectedProof {
  /** The request's method, as the client sent it. */
  readonly method: string;
  /** The request's URL, as the client called it (without query or fragment). */
  readonly url: string;
  /** The access token it comes with; absent at the token endpoint. */
  readonly accessToken?: string;
  readonly now: Date;
}

const refused = (detail: string) => new AppError('INVALID_DPOP_PROOF', { detail });

/** The URL as section 4.3 compares it: parsed, without query and fragment; null if not a URL. */
function comparable(url: string): string | null {
  const parsed = URL.parse(url);
  if (parsed === null) return null;
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** The `ath` of an access token: its SHA-256, base64url (section 4.2). */
export const accessTokenHash = (accessToken: string) =>
  createHash('sha256').update(accessToken).digest('base64url');

/**
 * Checks a proof's signature, type, key and claims (section 4.3, steps 1 to 11 but the replay,
 * which `spendProof` does once the request is otherwise good). Refusals are INVALID_DPOP_PROOF
 * with a detail that names the check, never the proof.
 */
export async function verifyProof(proof: string, expected: ExpectedProof): Promise<DpopProof> {
  if (proof.length > MAX_PROOF_LENGTH) throw refused('The DPoP proof is too long.');
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    verified = await jwtVerify(proof, EmbeddedJWK, {
      algorithms: [...DPOP_ALGORITHMS],
      typ: DPOP_PROOF_TYPE,
      requiredClaims: ['jti', 'htm', 'htu', 'iat'],
      currentDate: expected.now,
    });
  } catch {
    throw refused('The DPoP proof is not a JWT of type dpop+jwt signed by the public key in its header.');
  }
  const { payload, protectedHeader } = verified;
  const { jti, htm, htu, iat, ath } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH)
    throw refused('The DPoP proof has no usable jti.');
  if (typeof iat !== 'number' || Math.abs(epochSeconds(expected.now) - iat) > DPOP_IAT_WINDOW_SECONDS)
    throw refused(`The DPoP proof's iat is not within ${DPOP_IAT_WINDOW_SECONDS} seconds of now.`);
  if (htm !== expected.method) throw refused("The DPoP proof's htm is not this request's method.");
  if (typeof htu !== 'string' || comparable(htu) === null || comparable(htu) !== comparable(expected.url))
    throw refused("The DPoP proof's htu is not this request's URL.");
  if (expected.accessToken === undefined) {
    if (ath !== undefined) throw refused('A DPoP proof for a token request has no ath.');
  } else if (ath !== accessTokenHash(expected.accessToken)) {
    throw refused("The DPoP proof's ath is not this access token's hash.");
  }
  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, 'sha256');
  return { jkt, jti, iat };
}

/**
 * Spends the proof's `jti` for its key, once across containers (section 11.1); a second use is
 * INVALID_DPOP_PROOF. `spender`: this request's own id, so the SDK's resend of our write is ours.
 */
export async function spendProof(replay: ReplayStore, proof: DpopProof, spender: string): Promise<void> {
  const keepUntil = proof.iat + DPOP_IAT_WINDOW_SECONDS + KEPT_AFTER_WINDOW_SECONDS;
  if (!(await replay.spend(proof.jkt, proof.jti, keepUntil, spender)))
    throw refused('The DPoP proof was used before.');
}
