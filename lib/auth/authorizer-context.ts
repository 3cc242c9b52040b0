// What the authorizer hands protected functions: API Gateway stringifies every value, and may replay
// a decision from its cache.
import * as v from 'valibot';

/** Epoch seconds, as API Gateway passes them on: stringified (a number is accepted too). */
const EpochSecondsSchema = v.pipe(
  v.union([v.pipe(v.string(), v.regex(/^\d{1,12}$/)), v.pipe(v.number(), v.integer(), v.minValue(0))]),
  v.transform(Number),
);

/** A decision cached before scopes existed has no `scope`: it was a user's, with the default scopes. */
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
    /**
     * A user's login time (`auth_time`); absent for a client, for a user's token signed before
     * access tokens had it, and in a decision cached before the authorizer passed it.
     */
    authTime: v.optional(EpochSecondsSchema),
    /** A user's session (`sid`); absent for a client and in older decisions. */
    sessionId: v.optional(v.pipe(v.string(), v.nonEmpty())),
    /** `passkey` for a user's session a passkey began; absent for a password's, a client's and older decisions. */
    signIn: v.optional(v.literal('passkey')),
    /** A client's token bound to a key (RFC 9449 `cnf.jkt`): its SHA-256 thumbprint; absent for a bearer token. */
    jkt: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/))),
  }),
  v.check((context) => (context.username === '') !== (context.clientId === ''), 'one subject'),
  v.check((context) => context.scope !== undefined || context.clientId === '', 'a client has scopes'),
  v.check((context) => context.authTime === undefined || context.clientId === '', 'a client has no login'),
  v.check((context) => context.jkt === undefined || context.clientId !== '', 'a user has no bound token'),
);

export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;
