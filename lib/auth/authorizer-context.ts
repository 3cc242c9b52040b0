/**
 * What the REQUEST authorizer hands to the protected functions in `requestContext.authorizer`,
 * declared once: lib/auth/authorizer.ts builds it, lib/http/caller.ts reads it back. API
 * Gateway stringifies every value on the way, and may replay a decision from its cache.
 */
import * as v from 'valibot';

/** Epoch seconds, as API Gateway passes them on: stringified (a number is accepted too). */
const EpochSecondsSchema = v.pipe(
  v.union([v.pipe(v.string(), v.regex(/^\d{1,12}$/)), v.pipe(v.number(), v.integer(), v.minValue(0))]),
  v.transform(Number),
);

/**
 * A user's or a client's context, never both. A decision cached before scopes existed has no
 * `scope`: it was a user's, whose tokens then allowed every route.
 */
export const AuthorizerContextSchema = v.pipe(
  v.object({
    /** The user a login token speaks for; empty for an API client's token. */
    username: v.optional(v.string(), ''),
    /** The API client a client token speaks for; empty for a user's token. */
    clientId: v.optional(v.string(), ''),
    /** Empty when the login has no customer. */
    customerId: v.optional(v.string(), ''),
    /** The token's scopes, space-delimited: what the functions re-check behind a cached decision. */
    scope: v.optional(v.string()),
    /** The token's `iat`, epoch seconds. */
    iat: EpochSecondsSchema,
    /** The token's `exp`, epoch seconds: protected functions refuse the request from then on. */
    exp: EpochSecondsSchema,
  }),
  v.check((context) => (context.username === '') !== (context.clientId === ''), 'one subject'),
  v.check((context) => context.scope !== undefined || context.clientId === '', 'a client has scopes'),
);

export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;
