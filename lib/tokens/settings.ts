/** The stage's token rules (lib/config.ts reads them from TOKEN_* and *_TOKEN_TTL). */
export interface TokenSettings {
  readonly issuer: string;
  /** Issuers this stage had before: their tokens verify until they expire (docs/stages.md, "Issuer"). */
  readonly formerIssuers?: readonly string[];
  /** The carrier's API; must differ from the issuer, the refresh tokens' audience. */
  readonly audience: string;
  readonly accessTtlSeconds: number;
}

export type AccessTokenSettings = TokenSettings & { readonly clientAccessTtlSeconds: number };

export type RefreshTokenSettings = TokenSettings & { readonly refreshTtlSeconds: number };
