/**
 * `keys list`: every key of the keyring and of the key set, its state and whether it is
 * published; a key of the keyring missing from the key set fails the command.
 */
import { failure } from './errors.ts';
import { type KeyLocation, type KeyMaterial, loadKeys, showKid } from './keys-material.ts';

export interface KeyEntry {
  readonly kid: string;
  /** `unknown`: published, but not in the keyring. */
  readonly role: 'active' | 'next' | 'retired' | 'unknown';
  /** When it became active (the last rotation) or retired. */
  readonly since: string | undefined;
  /** A retired key's successor, the key it shared the keyring with; undefined if not recorded. */
  readonly successor?: string | undefined;
  readonly published: boolean;
  /** The published `signed_until`: verifiers refuse its tokens issued later. */
  readonly signedUntil?: number | undefined;
}

/** Every key of the keyring, then every published key the keyring does not know. */
export function keyEntries({ keyring, jwks }: KeyMaterial): KeyEntry[] {
  const published = new Map(jwks.keys.map((key) => [key.kid, key]));
  const entries: KeyEntry[] = [
    { kid: keyring.active.kid, role: 'active' as const, since: keyring.rotatedAt },
    { kid: keyring.next.kid, role: 'next' as const, since: undefined },
    ...keyring.retired.map(({ kid, retiredAt, successor }) => ({
      kid,
      role: 'retired' as const,
      since: retiredAt,
      successor,
    })),
  ].map((entry) => ({
    ...entry,
    published: published.has(entry.kid),
    signedUntil: published.get(entry.kid)?.signed_until,
  }));
  const known = new Set(entries.map(({ kid }) => kid));
  for (const { kid, signed_until } of jwks.keys) {
    if (!known.has(kid))
      entries.push({ kid, role: 'unknown', since: undefined, published: true, signedUntil: signed_until });
  }
  return entries;
}

const describeState = ({ role, since, successor }: KeyEntry) => {
  if (role === 'unknown') return 'not in the keyring';
  const state = since === undefined ? role : `${role} since ${since}`;
  if (role !== 'retired') return state;
  return `${state}, succeeded by ${successor === undefined ? '(not recorded)' : showKid(successor)}`;
};

const describePublished = ({ published, signedUntil }: KeyEntry) => {
  if (!published) return 'NOT PUBLISHED';
  if (signedUntil === undefined) return 'published';
  return `published, signed until ${new Date(signedUntil * 1000).toISOString()}`;
};

/**
 * One aligned line per key: kid, state (a retired key's with its successor, so the chain of
 * keys that shared a keyring can be followed), whether the key set holds it and until when it signed.
 */
export function formatKeyEntries(entries: readonly KeyEntry[]): string[] {
  const rows = entries.map((entry) => ({ ...entry, kid: showKid(entry.kid), state: describeState(entry) }));
  const kidWidth = Math.max(...rows.map(({ kid }) => kid.length));
  const stateWidth = Math.max(...rows.map(({ state }) => state.length));
  return rows.map(
    (row) => `${row.kid.padEnd(kidWidth)}  ${row.state.padEnd(stateWidth)}  ${describePublished(row)}`,
  );
}

export const unpublishedKeys = (entries: readonly KeyEntry[]) =>
  entries.filter(({ role, published }) => role !== 'unknown' && !published);

/**
 * `keys list`: prints one line per key, then fails when a key of the keyring is not
 * published: tokens signed with it do not verify (or, for the next key, will not).
 */
export async function listKeys(location: KeyLocation, print: (text: string) => void): Promise<void> {
  const entries = keyEntries(await loadKeys(location));
  for (const line of formatKeyEntries(entries)) print(line);
  const unpublished = unpublishedKeys(entries);
  if (unpublished.length > 0) {
    throw failure(
      `the key set ${location.jwks} lacks ${unpublished.length} key(s) of the keyring ` +
        `(${unpublished.map(({ kid, role }) => `${showKid(kid)} ${role}`).join(', ')}): tokens signed ` +
        `with them do not verify; if a keys rotate failed half-way, run keys rotate${location.stageOption} again`,
    );
  }
}
