/**
 * Revocation's writes on the accounts table's user and client items (whose keys their stores
 * give as `keyOf`): the cutoff (`revokedBefore`), the sessions revoked for reuse
 * (`revokedSessions`) and a client's own revoked tokens (`revokedTokens`); and the authorizer's
 * read of a user's state.
 */
import { type ItemKey, type Owner, readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { type Clock, epochSeconds } from '../time.ts';
import {
  type ClientTokenRevoker,
  MAX_REVOKED_SESSIONS,
  MAX_REVOKED_TOKENS,
  revocationCutoff,
  type SessionTokenRevoker,
  type UserStatusReader,
} from './revocation.ts';

export function createStatusReader(
  deps: Table & { readonly keyOf: (username: string) => ItemKey },
): UserStatusReader {
  return {
    async findStatus(username, options = {}) {
      const item = await readOwned(
        deps,
        deps.keyOf(username),
        { attribute: 'username', name: username },
        ['enabled', 'revokedBefore', 'revokedSessions'],
        options,
      );
      if (item === undefined) return null;
      return {
        enabled: item.enabled === true,
        revokedBefore: Number(item.revokedBefore ?? 0),
        revokedSessions: new Set(Object.keys(item.revokedSessions ?? {})),
      };
    },
  };
}

/**
 * Applies `assignments` to the user item and moves its revocation cutoff forward: to the next
 * whole second, or one second past the current cutoff when that is not earlier. It never
 * stays put: a login after an earlier revocation in the same second got `iat` = that cutoff
 * (`issuedAtFor`), and this revocation must reach its tokens too. False when there is no
 * user of exactly that name.
 */
export async function moveRevocationCutoff(
  input: Table & {
    readonly key: ItemKey;
    readonly owner: Owner;
    readonly assignments: readonly string[];
    readonly values: Record<string, unknown>;
    /** Attributes the same write removes. */
    readonly remove?: readonly string[];
    /**
     * A condition the item must also meet, its values named in `values`; false if it does not.
     * ANDed as it is (DynamoDB refuses redundant parentheses): an OR in it needs its own.
     */
    readonly also?: string;
    readonly clock: Clock;
  },
): Promise<boolean> {
  const { key, owner, assignments, values } = input;
  const cutoff = revocationCutoff(input.clock());
  const removal =
    input.remove === undefined || input.remove.length === 0 ? '' : ` REMOVE ${input.remove.join(', ')}`;
  const update = (newCutoff: string, condition: string, extra: Record<string, unknown>) =>
    updateOwned(input, key, owner, {
      expression: `SET ${[...assignments, `revokedBefore = ${newCutoff}`].join(', ')}${removal}`,
      condition: input.also === undefined ? condition : `${condition} AND ${input.also}`,
      values: { ...values, ...extra, ':cutoff': cutoff },
    });
  const moved =
    (await update(':cutoff', '(attribute_not_exists(revokedBefore) OR revokedBefore < :cutoff)', {})) ??
    // The cutoff only grows, so once this condition holds it holds until the write.
    (await update('revokedBefore + :one', 'revokedBefore >= :cutoff', { ':one': 1 }));
  return moved !== undefined;
}

/** The maps of revoked ids a user or client item holds, each id listed until its tokens expire. */
type RevokedMap = 'revokedSessions' | 'revokedTokens';

/**
 * Lists `id` in the item's map until `until` (epoch seconds) and drops the entries whose tokens
 * expired. Two writes, since DynamoDB cannot set a key of a map that may not exist yet: make the
 * map, then set this entry and remove the expired ones. `gone`: the owner has no item, so nothing
 * is left to revoke; `full`: `max` live entries, this one not among them, and nothing written.
 */
async function listRevoked(
  table: Table & { readonly clock: Clock },
  entry: {
    readonly key: ItemKey;
    readonly owner: Owner;
    readonly map: RevokedMap;
    readonly id: string;
    readonly until: number;
    readonly max?: number;
  },
): Promise<'listed' | 'full' | 'gone'> {
  const { key, owner, map, id } = entry;
  const made = await updateOwned(table, key, owner, {
    expression: `SET ${map} = if_not_exists(${map}, :empty)`,
    values: { ':empty': {} },
    returnValues: 'UPDATED_NEW',
  });
  if (made === undefined) return 'gone';
  const listed = (made.Attributes?.[map] ?? {}) as Record<string, number>;
  const nowSeconds = epochSeconds(table.clock());
  const others = Object.keys(listed).filter((listedId) => listedId !== id);
  const expired = others.filter((listedId) => Number(listed[listedId]) < nowSeconds);
  const listedAlready = Object.hasOwn(listed, id);
  if (entry.max !== undefined && !listedAlready && others.length - expired.length >= entry.max) return 'full';
  const names = Object.fromEntries([id, ...expired].map((listedId, index) => [`#s${index}`, listedId]));
  // An owner removed between the two writes has nothing left to revoke.
  const set = await updateOwned(table, key, owner, {
    expression: [
      `SET ${map}.#s0 = :until`,
      ...(expired.length === 0 ? [] : [`REMOVE ${expired.map((_, i) => `${map}.#s${i + 1}`).join(', ')}`]),
    ].join(' '),
    names,
    values: { ':until': entry.until },
  });
  return set === undefined ? 'gone' : 'listed';
}

/**
 * Lists `id` in `map`; beside MAX_REVOKED_SESSIONS listed ones, moves the owner's cutoff instead.
 * The cutoff reaches every listed id's tokens too (all issued before it): the list goes.
 */
async function listOrCutOff(
  deps: Table & { readonly clock: Clock },
  entry: { key: ItemKey; owner: Owner; map: RevokedMap; id: string; until: number },
): Promise<'listed' | 'cutoff'> {
  const listed = await listRevoked(deps, { ...entry, max: MAX_REVOKED_SESSIONS });
  if (listed !== 'full') return 'listed';
  await moveRevocationCutoff({
    ...deps,
    key: entry.key,
    owner: entry.owner,
    assignments: [],
    values: {},
    remove: [entry.map],
  });
  return 'cutoff';
}

export function createSessionTokenRevoker(
  deps: Table & { readonly keyOf: (username: string) => ItemKey; readonly clock: Clock },
): SessionTokenRevoker {
  return {
    revokeSessionTokens: (username, sessionId, until) =>
      listOrCutOff(deps, {
        key: deps.keyOf(username),
        owner: { attribute: 'username', name: username },
        map: 'revokedSessions',
        id: sessionId,
        until,
      }),
  };
}

/**
 * RFC 7009 for a client's own access token: its `jti` in the client item's `revokedTokens`,
 * which the authorizer reads with the client's status (`keyOf`: the client item's key).
 */
export function createClientTokenRevoker(
  deps: Table & { readonly keyOf: (clientId: string) => ItemKey; readonly clock: Clock },
): ClientTokenRevoker {
  return {
    async revokeClientToken(clientId, jti, until) {
      const listed = await listRevoked(deps, {
        key: deps.keyOf(clientId),
        owner: { attribute: 'clientId', name: clientId },
        map: 'revokedTokens',
        id: jti,
        until,
        max: MAX_REVOKED_TOKENS,
      });
      return listed === 'full' ? 'full' : 'revoked';
    },
  };
}
