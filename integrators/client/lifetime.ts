/** When to renew a token: its lifetime, from the token itself or the answer that brought it. */
import { isRecord } from './answers.ts';

/**
 * How long a token lives from `sentAt`, in this client's clock. From the JWT's `exp - iat`
 * when it has both, so a skewed local clock does not matter; else from `expireAt` or `exp`.
 * The payload is decoded, not verified: it only schedules the renewal, and the service
 * verifies every token it gets.
 */
export function lifetimeOf(token: string, sentAt: number, expireAt: number): number {
  const claims = jwtClaims(token);
  if (claims.exp !== undefined && claims.iat !== undefined)
    return wholeSecondsLifetime(claims.exp - claims.iat);
  if (!Number.isNaN(expireAt)) return expireAt - sentAt;
  if (claims.exp !== undefined) return claims.exp * 1000 - sentAt;
  return 0;
}

/**
 * A lifetime given in whole seconds, less one: `iat` is the issue time rounded down, so the
 * token may have been issued up to a second before the server's count starts.
 */
export const wholeSecondsLifetime = (seconds: number) => Math.max(0, seconds - 1) * 1000;

/** Renew a margin before expiry: 10 % of the lifetime, at most a minute. */
export const renewAt = (sentAt: number, lifetimeMs: number) =>
  sentAt + lifetimeMs - Math.min(60_000, lifetimeMs / 10);

/** The `exp` and `iat` of a JWT's payload, read without verifying it; none of a token that is not a JWT. */
function jwtClaims(token: string): { exp?: number; iat?: number } {
  const payload = token.split('.')[1];
  if (payload === undefined) return {};
  try {
    const base64 = payload.replaceAll('-', '+').replaceAll('_', '/');
    const bytes = Uint8Array.from(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')), (c) =>
      c.charCodeAt(0),
    );
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (!isRecord(claims)) return {};
    return {
      ...(typeof claims.exp === 'number' && { exp: claims.exp }),
      ...(typeof claims.iat === 'number' && { iat: claims.iat }),
    };
  } catch {
    return {};
  }
}
