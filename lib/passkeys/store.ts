/** What the passkeys' rules (passkeys.ts) need of storage: the passkeys themselves and their ceremonies' challenges. */

/** A registered passkey (a WebAuthn public key credential) of one user. */
export interface Passkey {
  /** The credential id, base64url: what the authenticator names it by. */
  readonly passkeyId: string;
  readonly username: string;
  /** The administrator's name for it ("Laptop", "YubiKey 5"). */
  readonly name: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  /** The signature counter last seen; 0 for an authenticator that keeps none (most synced passkeys). */
  readonly counter: number;
  /** How the browser may reach the authenticator (`internal`, `usb`, `hybrid`, …), as it said at registration. */
  readonly transports: readonly string[];
  /** Synced (a multi-device credential, backed up) or bound to one authenticator. */
  readonly backedUp: boolean;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601; absent until its first sign-in. */
  readonly lastUsedAt?: string;
}

export interface PasskeyStore {
  /**
   * The user's WebAuthn user handle (base64url of 32 random bytes, no name in it), made on first
   * use, with the alias that finds the user by it; null when there is no user of exactly that name.
   */
  userHandle(username: string): Promise<string | null>;
  /** The user's passkeys, oldest first: a consistent read. */
  list(username: string): Promise<Passkey[]>;
  /** One write: false when the user has a passkey of that id already. */
  add(passkey: Passkey): Promise<boolean>;
  /** False when the user has none of that id. */
  remove(username: string, passkeyId: string): Promise<boolean>;
  /** The passkey of that id of the user whose handle it is, or null. */
  findByHandle(userHandle: string, passkeyId: string): Promise<Passkey | null>;
  /** A sign-in's use: the counter moves from `from` to `to`; false when it is no longer `from` (another use won). */
  recordUse(passkey: Passkey, use: { readonly to: number; readonly at: string }): Promise<boolean>;
}

/** What a challenge was issued for: the registration of an administrator's passkey, or a sign-in. */
export type Ceremony =
  | { readonly kind: 'registration'; readonly username: string }
  | { readonly kind: 'sign-in' };

export interface ChallengeStore {
  /** Epoch seconds `expiresAt`. */
  create(challenge: string, ceremony: Ceremony, expiresAt: number): Promise<void>;
  /**
   * Spends the challenge: the ceremony it was issued for, once. Null when it is unknown, expired
   * or spent by another request (`spender`, a request's own id: the SDK's resend of the same
   * request is no second use).
   */
  spend(challenge: string, spender: string, now: Date): Promise<Ceremony | null>;
}
