/** The self-service API's requests: bodies, path ids and the audit query, checked before anything is read. */
import * as v from 'valibot';
import { UsernameSchema } from '../accounts/repository.ts';
import { ClientIdSchema, ClientNameSchema, SecretIdSchema } from '../clients/clients.ts';
import { ClientJwksSchema } from '../clients/jwks.ts';
import { ClientJwkSchema } from '../clients/keys.ts';
import { ConnectionIdSchema } from '../connections/connections.ts';
import { type Scope, SELF_SERVICE_CLIENT_SCOPES, sortScopes } from '../scopes.ts';
import { MAX_EXPIRE_OTHERS_SECONDS } from './administration.ts';

const ClientScopesSchema = v.pipe(
  v.array(
    v.picklist(
      SELF_SERVICE_CLIENT_SCOPES as readonly Scope[] as [Scope, ...Scope[]],
      `must be one of ${SELF_SERVICE_CLIENT_SCOPES.join(', ')}`,
    ),
  ),
  v.minLength(1, 'must name at least one scope'),
  v.check((scopes) => new Set(scopes).size === scopes.length, 'must not name a scope twice'),
  v.transform((scopes) => sortScopes(scopes)),
);

/** The message of an object with a member it does not know: valibot's own would say "must be never". */
const ONLY = (members: string) => `must be an object of ${members} only`;

/**
 * With `jwks`, a client of keys (`private_key_jwt`), which gets no secret at all; with
 * `dpopBoundAccessTokens`, one whose every token request must carry a DPoP proof (RFC 9449).
 */
export const CreateClientSchema = v.strictObject(
  {
    name: ClientNameSchema,
    scopes: ClientScopesSchema,
    jwks: v.optional(ClientJwksSchema),
    dpopBoundAccessTokens: v.optional(v.boolean()),
  },
  ONLY('name, scopes, jwks and dpopBoundAccessTokens'),
);

export const UpdateClientSchema = v.pipe(
  v.strictObject(
    { name: v.optional(ClientNameSchema), enabled: v.optional(v.boolean()) },
    ONLY('name and enabled'),
  ),
  v.check(
    (change) => change.name !== undefined || change.enabled !== undefined,
    'must change name or enabled',
  ),
);

/** No body, or an empty object: a secret beside the others, which keep working until removed. */
export const AddSecretSchema = v.optional(
  v.strictObject(
    {
      expireOthersInSeconds: v.optional(
        v.pipe(
          v.number(),
          v.integer('must be a whole number of seconds'),
          v.minValue(0, 'must not be negative'),
          v.maxValue(MAX_EXPIRE_OTHERS_SECONDS, `must be at most ${MAX_EXPIRE_OTHERS_SECONDS} (30 days)`),
        ),
      ),
      /** A client of keys' next key (a rotation), instead of a secret. */
      jwk: v.optional(ClientJwkSchema),
    },
    ONLY('expireOthersInSeconds and jwk'),
  ),
  {},
);

export const ClientParamsSchema = v.object({ clientId: ClientIdSchema });
export const ConnectionParamsSchema = v.object({ connectionId: ConnectionIdSchema });
export const SecretParamsSchema = v.object({ clientId: ClientIdSchema, secretId: SecretIdSchema });

export const DEFAULT_AUDIT_PAGE = 50;
export const MAX_AUDIT_PAGE = 100;

/** `limit` and `next` of GET audit-events; anything else in the query is refused, not ignored. */
export const AuditQuerySchema = v.strictObject(
  {
    limit: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^[1-9][0-9]{0,2}$/, `must be a whole number from 1 to ${MAX_AUDIT_PAGE}`),
        v.transform(Number),
        v.maxValue(MAX_AUDIT_PAGE, `must be a whole number from 1 to ${MAX_AUDIT_PAGE}`),
      ),
      String(DEFAULT_AUDIT_PAGE),
    ),
    next: v.optional(
      v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be the next of an earlier page')),
    ),
  },
  'is not a query parameter of this route',
);

/** The query of every route but GET audit-events: none, and any parameter is refused, not ignored. */
export const NoQuerySchema = v.strictObject({}, 'is not a query parameter of this route');

/** A user to make or unmake an administrator: in the body, as a username may hold `/`, `?` or `%`. */
export const AdministratorSchema = v.strictObject({ username: UsernameSchema }, ONLY('username'));
