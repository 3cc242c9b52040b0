/**
 * The algorithms of a client's own keys: its `private_key_jwt` assertions (lib/clients/keys.ts)
 * and its DPoP proofs (lib/dpop/proof.ts), the metadata's `*_auth_signing_alg_values_supported`
 * and `dpop_signing_alg_values_supported`. Ed25519 is EdDSA by its fully specified name
 * (RFC 9864), as WebCrypto-based clients (oauth4webapi) sign with an Ed25519 key. No imports:
 * the challenges of every function name them (lib/http/problems.ts).
 */
export const ASSERTION_ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256', 'PS256'] as const;
export type AssertionAlgorithm = (typeof ASSERTION_ALGORITHMS)[number];
