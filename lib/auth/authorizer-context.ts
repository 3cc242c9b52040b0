// What the authorizer hands protected functions: API Gateway stringifies every value, and may replay
// a decision from its cache.
import * as v from 'valibot';

/** Epoch seconds, as API Gateway passes them on: stringified (a number is accepted too). */
const EpochSecondsSchema = v.pipe(
  v.union([v.pipe(v.string(), v.regex(/^\d{1,12}$/)), v.pipe(v.number(), v.integer(), v.minValue(0))]),
  v.transform(Number),
);

/** A decision cached before scopes existed has no `scope`: it was a user's, allowed every route. */
export const AuthorizerContextSchema = v.pipe(
  v.object({
    /** Exactly one of username and clientId is non-empty. */
    username: v.optional(v.string(), ''),
    clientId: v.optional(v.string(), ''),
    /** Empty when the login has no customer. */
    customerId: v.optional(v.string(), ''),
    /** Space-delimited. */
    scope: v.optional(v.string()),
    iat: EpochSecondsSchema,
    exp: EpochSecondsSchema,
  }),
  v.check((context) => (context.username === '') !== (context.clientId === ''), 'one subject'),
  v.check((context) => context.scope !== undefined || context.clientId === '', 'a client has scopes'),
);

export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;
