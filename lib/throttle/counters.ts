/** A throttle's counters: their keys (no address or name in the table), periods, holds and locks. */
import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { foldUsername } from '../accounts/username-key.ts';
import type { QuotaPolicy } from '../quota.ts';
import type { ThrottleCounter, ThrottlePolicy, ThrottleSettings } from './throttle.ts';

/**
 * A username's counter key: an HMAC, under a secret not in the table, so a password typed
 * into the username field cannot be found from the table alone by hashing guesses.
 */
export const usernameCounterKey = (username: string, secret: Uint8Array) =>
  `USER#${createHmac('sha256', secret).update(foldUsername(username)).digest('base64url')}`;

/** An API client's counter key: keyed like a username's, in a space of its own. */
export const clientCounterKey = (clientId: string, secret: Uint8Array) =>
  `CLIENT#${createHmac('sha256', secret).update(clientId).digest('base64url')}`;

/** An address as counted: an IPv6 client by its /64, or one subscriber would hold 2^64 counters. */
export function sourceAddress(sourceIp: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(sourceIp)?.[1];
  if (mapped !== undefined) return mapped;
  if (isIPv6(sourceIp)) return `${ipv6Groups(sourceIp).slice(0, 4).join(':')}::/64`;
  return sourceIp;
}

/** People's counter of an address. */
export const sourceIpCounterKey = (sourceIp: string) => `IP#${sourceAddress(sourceIp)}`;

/** API clients' counter of an address, apart from people's. */
export const clientSourceIpCounterKey = (sourceIp: string) => `CLIENTIP#${sourceAddress(sourceIp)}`;

/**
 * A source's tag for one name's counter: keyed by the counter secret and the name, so the table
 * holds no address, and one source's tags for two names cannot be matched.
 */
export const knownSourceTag = (nameKey: string, sourceIp: string, secret: Uint8Array) =>
  createHmac('sha256', secret)
    .update(`${nameKey}\n${sourceAddress(sourceIp)}`)
    .digest('base64url')
    .slice(0, 22);

/** A known source's own counter for a name: its failures lock it alone. */
export const knownSourceCounterKey = (nameKey: string, tag: string) => `${nameKey}#${tag}`;

/** The most known sources a name keeps: past it, the one known the longest ago is forgotten first. */
export const MAX_KNOWN_SOURCES = 100;

/** The eight groups of an IPv6 address, each as four lower-case hex digits. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => group.padStart(4, '0'));
}

/** The period (`now - windowStart` long, counted from the epoch) a counter counts `now` in. */
export const counterPeriod = (now: number, windowStart: number) =>
  Math.floor(now / Math.max(1, now - windowStart));

/** The longest an attempt can run: API Gateway ends every integration within 29 seconds. */
export const ATTEMPT_MAX_SECONDS = 30;

/** How long unsettled attempts at the limit hold a counter: never longer than the shortest lock. */
export const holdSeconds = (policy: ThrottlePolicy) => Math.min(ATTEMPT_MAX_SECONDS, policy.baseLockSeconds);

/**
 * Until when (epoch ms) a counter refuses attempts: its lock or its hold, 0 for none. What
 * operators see as "locked" is exactly what refuses a login.
 */
export function refusedUntil(counter: ThrottleCounter, policy: ThrottlePolicy, now: number): number {
  if (policy.limit === 0) return 0;
  // At the limit with failures, or with attempts not decided yet (in flight, or cut short by a
  // fault): held for as long as an attempt can run after the last one started.
  const held =
    Math.max(counter.failures, counter.attempts) >= policy.limit && !counter.retryAfterLock
      ? counter.lastAttemptAt + holdSeconds(policy) * 1000
      : 0;
  const until = Math.max(counter.lockedUntil, held);
  return until > now ? until : 0;
}

/** The lock after `failures` failures under `policy`, in seconds (0 below the limit). */
export function lockSeconds(policy: ThrottlePolicy, failures: number): number {
  if (policy.limit === 0 || failures < policy.limit) return 0;
  const doublings = Math.min(failures - policy.limit, 30);
  return Math.min(policy.baseLockSeconds * 2 ** doublings, policy.maxLockSeconds);
}

/** The in-flight slot `now` is in: attempts are bounded per slot, each as long as an attempt's hold. */
export const inflightSlot = (now: number, policy: ThrottlePolicy) =>
  Math.floor(now / (holdSeconds(policy) * 1000));

/** The limits a login (or, with `client`, a client authentication) is counted against, as published. */
export function quotaPolicies(settings: ThrottleSettings, client: boolean): QuotaPolicy[] {
  const address = client ? settings.clientSourceIp : settings.sourceIp;
  return [
    { name: client ? 'client' : 'username', policy: settings.username },
    { name: 'address', policy: address },
  ]
    .filter(({ policy }) => policy.limit > 0)
    .map(({ name, policy }) => ({ name, quota: policy.limit, windowSeconds: policy.windowSeconds }));
}
