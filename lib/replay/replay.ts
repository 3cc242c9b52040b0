/**
 * What is spent once: a client's `private_key_jwt` assertion (RFC 7523 section 3, item 7) and a
 * DPoP proof (RFC 9449 section 11.1), each by its `jti`, until no copy of it could be taken any
 * more, across every container (lib/replay/dynamodb.ts).
 */
export interface ReplayStore {
  /**
   * True the first time `owner` (the client, the proof's key) spends `jti`, a resend of this very
   * write included (the same `spender`); false for one spent before. Kept until `keepUntil` (epoch seconds).
   */
  spend(owner: string, jti: string, keepUntil: number, spender: string): Promise<boolean>;
}
