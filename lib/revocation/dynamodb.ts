/**
 * Revocation's writes and its one read, on the accounts table's user items (whose keys the
 * account store gives as `keyOf`): the user's cutoff (`revokedBefore`), the sessions revoked
 * for reuse (`revokedSessions`), and the authorizer's read of both with `enabled`.
 */
import { type ItemKey, type Owner, readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { type Clock, epochSeconds } from '../time.ts';
import { revocationCutoff, type SessionTokenRevoker, type UserStatusReader } from './revocation.ts';

export function createStatusReader(
  deps: Table & { readonly keyOf: (username: string) => ItemKey },
): UserStatusReader {
  return {
    async findStatus(username) {
      const item = await readOwned(deps, deps.keyOf(username), { attribute: 'username', name: username }, [
        'enabled',
        'revokedBefore',
        'revokedSessions',
      ]);
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
      condition,
      values: { ...values, ...extra, ':cutoff': cutoff },
    });
  const moved =
    (await update(':cutoff', '(attribute_not_exists(revokedBefore) OR revokedBefore < :cutoff)', {})) ??
    // The cutoff only grows, so once this condition holds it holds until the write.
    (await update('revokedBefore + :one', 'revokedBefore >= :cutoff', { ':one': 1 }));
  return moved !== undefined;
}

export function createSessionTokenRevoker(
  deps: Table & { readonly keyOf: (username: string) => ItemKey; readonly clock: Clock },
): SessionTokenRevoker {
  const { keyOf, clock } = deps;
  return {
    async revokeSessionTokens(username, sessionId, until) {
      const owner: Owner = { attribute: 'username', name: username };
      // Two writes, since DynamoDB cannot set a key of a map that may not exist yet: make
      // the map, then set this session's entry and drop the entries whose tokens expired.
      const made = await updateOwned(deps, keyOf(username), owner, {
        expression: 'SET revokedSessions = if_not_exists(revokedSessions, :empty)',
        values: { ':empty': {} },
        returnValues: 'UPDATED_NEW',
      });
      if (made === undefined) return;
      const revoked = (made.Attributes?.revokedSessions ?? {}) as Record<string, number>;
      const nowSeconds = epochSeconds(clock());
      const expired = Object.keys(revoked).filter(
        (id) => id !== sessionId && Number(revoked[id]) < nowSeconds,
      );
      const names = Object.fromEntries([sessionId, ...expired].map((id, index) => [`#s${index}`, id]));
      // A user removed between the two writes has nothing left to revoke.
      await updateOwned(deps, keyOf(username), owner, {
        expression: [
          'SET revokedSessions.#s0 = :until',
          ...(expired.length === 0
            ? []
            : [`REMOVE ${expired.map((_, i) => `revokedSessions.#s${i + 1}`).join(', ')}`]),
        ].join(' '),
        names,
        values: { ':until': until },
      });
    },
  };
}
