/**
 * A customer's administrators as its administrators grant and end them (docs/administrators.md):
 * within the granter's own scopes, each change in the audit trail, and never the customer's last.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.ts';
import { describeError } from '../log.ts';
import { userTokenScopes } from '../scopes.ts';
import { type AdministrationDeps, REFUSALS } from './administration.ts';
import { type Administrator, recordChange, requireRecentLogin, requireWithinOwn } from './administrator.ts';

export const listAdministrators = (deps: AdministrationDeps, admin: Administrator) =>
  deps.administrations.listAdministrators(admin.customerId);

/**
 * The longest an end of an administration holds its mark: longer than any call runs (API
 * Gateway ends an integration within 29 s), so a mark that a failed call left behind ends too.
 */
export const ENDING_HOLD_MS = 30_000;

/**
 * Whether a user of the customer other than `username` administers it and may act: enabled,
 * and not being ended itself. The index names the candidates; each is read again, strongly
 * consistent, because the index may still list an administration ended a moment ago. A grant
 * of a moment ago may be missing from it, which only refuses.
 */
async function anotherAdministrator(
  deps: AdministrationDeps,
  customerId: string,
  username: string,
): Promise<'found' | 'being-ended' | 'none'> {
  const candidates = await deps.administrations.listAdministrators(customerId);
  const now = deps.clock().getTime();
  let beingEnded = false;
  for (const name of candidates.filter((candidate) => candidate !== username)) {
    const other = await deps.administrations.findAdministration(name);
    if (other?.admin !== true || !other.enabled || other.customerId !== customerId) continue;
    if (other.endingUntil <= now) return 'found';
    beingEnded = true;
  }
  // Another administrator whose own end is under way: not the last, but not one to count on yet.
  return beingEnded ? 'being-ended' : 'none';
}

const noSuchUser = () => new AppError('NOT_FOUND', { detail: REFUSALS.noSuchUser });

/**
 * Grants (true) or ends (false) the administration of a user of the administrator's own customer,
 * as an operator's `user admin grant|revoke`. It gives the power to mint credentials, so it
 * needs the recent login too, and a narrowed administrator grants it only to a user whose
 * scopes are within its own. Ending one's own is allowed; ending it revokes that user's tokens.
 * The last administration of a customer is not ended here (GitHub's last owner): the customer
 * would have nobody to manage its credentials until an operator granted one again, as the
 * operator's `user admin revoke` still may.
 */
export async function setAdministrator(
  deps: AdministrationDeps,
  admin: Administrator,
  username: string,
  administers: boolean,
): Promise<void> {
  requireRecentLogin(deps, admin);
  const user = await deps.administrations.findAdministration(username);
  if (user === null || user.customerId !== admin.customerId) throw noSuchUser();
  // Already so: nothing changes, so no user is signed out and nothing is recorded.
  if (user.admin === administers) return;
  if (administers) {
    requireWithinOwn(deps, admin, userTokenScopes({ scopes: user.scopes }));
    // Conditioned on the customer in its write: a user removed and added again under another
    // customer since the read above is not made an administrator of it.
    await deps.administrations.setAdministrator(username, true, admin.customerId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'NOT_FOUND') throw noSuchUser();
      throw error;
    });
  } else if (!(await endAdministration(deps, admin.customerId, username))) {
    return;
  }
  await recordChange(deps, admin, administers ? 'user.admin.granted' : 'user.admin.revoked', { username });
}

/**
 * Ends `username`'s administration unless it is the customer's last. Two ends at once each
 * mark their user first and then look for another administrator not marked, so that of two
 * administrators ending each other (or themselves) at least one sees the other's mark and is
 * refused: no interleaving leaves the customer without one (each end's look comes after its own
 * mark, so the later look of the two sees the earlier mark).
 */
async function endAdministration(
  deps: AdministrationDeps,
  customerId: string,
  username: string,
): Promise<boolean> {
  const now = deps.clock().getTime();
  const ending = { id: randomUUID(), until: now + ENDING_HOLD_MS };
  const marked = await deps.administrations.markEnding(username, customerId, ending, now);
  // Ended (or moved) since the read: nothing left to end, and nothing to record.
  if (marked === 'not-administrator') return false;
  if (marked === 'in-progress') throw new AppError('CONFLICT', { detail: REFUSALS.endInProgress });
  try {
    const another = await anotherAdministrator(deps, customerId, username);
    if (another !== 'found')
      throw new AppError('CONFLICT', {
        detail: another === 'being-ended' ? REFUSALS.endInProgress : REFUSALS.lastAdministrator,
      });
    // On condition that the mark still holds: an end slower than its mark is refused, as an
    // end whose look could be stale by then. A write the SDK sent again after its answer was
    // lost finds its own mark gone with the administration: ended all the same.
    if (await deps.administrations.endMarked(username, customerId, ending, deps.clock().getTime()))
      return true;
    if ((await deps.administrations.findAdministration(username))?.admin === false) return true;
    throw new AppError('CONFLICT', { detail: REFUSALS.endInProgress });
  } catch (error) {
    // A mark left behind holds for ENDING_HOLD_MS at most: the refusal stands either way.
    await deps.administrations.unmark(username, ending).catch((failure: unknown) => {
      deps.logger.warn('administration end not taken back', { error: describeError(failure) });
    });
    throw error;
  }
}
