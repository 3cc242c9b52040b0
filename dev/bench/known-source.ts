/**
 * The login throttle's known-source path (docs/behaviour.md, "Brute force: the login
 * throttle"): a name strangers have locked, failing from addresses of their own, logged into
 * from a source that logged in as it before. The name refuses, and the attempt is counted on
 * the source's own counter instead: one more conditional write after the name's refusal read,
 * and a success remembers the source on the name's counter in one more.
 *
 * Set up through the real handlers, so the name's counter holds what production's would.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readLoginConfig } from '../../lib/config.ts';
import { knownSourceTag } from '../../lib/throttle/counters.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import { BENCH_SOURCE, expectStatus, fromSource, type HttpHandler } from './handlers.ts';

/** A name locked by strangers that knows the bench's source. */
export interface LockedName {
  /** Throws unless the name has refused everyone but its known source from its set-up until now. */
  assertStillLocked(): Promise<void>;
}

/**
 * Locks `nameKey` as strangers would: a success from the bench's source first (the name then
 * knows it), then as many failures as the name's limit from as many other addresses, a lock
 * held at its longest (strangers who keep at it hold it there), and a stranger with the right
 * credentials refused.
 */
export async function lockByStrangers(options: {
  readonly handler: HttpHandler;
  readonly store: ThrottleStore;
  readonly nameKey: string;
  readonly counterSecret: Uint8Array;
  /** The name's right credentials, from the bench's source. */
  readonly right: () => APIGatewayProxyEvent;
  /** Wrong ones (a password, or a client secret) for the name. */
  readonly wrong: () => APIGatewayProxyEvent;
}): Promise<LockedName> {
  const { handler, store, nameKey } = options;
  const { username: policy, knownSourceSeconds } = readLoginConfig().throttle;
  await expectStatus(handler, options.right(), 200);
  // TEST-NET-2: nobody's address.
  const strangers = Array.from({ length: policy.limit }, (_, index) => `198.51.100.${index + 1}`);
  for (const stranger of strangers) await expectStatus(handler, fromSource(options.wrong(), stranger), 401);
  const read = async () => {
    const counter = (await store.read([nameKey])).get(nameKey);
    if (counter === undefined) throw new Error(`no counter ${nameKey}`);
    return counter;
  };
  const tag = knownSourceTag(nameKey, BENCH_SOURCE, options.counterSecret);
  const now = Date.now();
  const set = await read();
  if (set.lockedUntil <= now || (set.knownSources.get(tag) ?? 0) <= now)
    throw new Error(`${nameKey} is not locked, or does not know the bench's source`);
  const lockedUntil = now + policy.maxLockSeconds * 1000;
  await store.lock(nameKey, {
    lockedUntil,
    expiresAt: Math.ceil(
      (now + Math.max(policy.windowSeconds + policy.maxLockSeconds, knownSourceSeconds) * 1000) / 1000,
    ),
  });
  await expectStatus(handler, fromSource(options.right(), strangers[0] ?? ''), 429);
  return {
    // A lock only lengthens, and only an operator's unlock ends one early.
    async assertStillLocked() {
      if ((await read()).lockedUntil < lockedUntil || Date.now() >= lockedUntil)
        throw new Error(`${nameKey}'s lock ended before the run did: its rows timed the normal path`);
    },
  };
}
