/** The rules of a client's secrets (lib/clients/secrets.ts), which every store and caller follows. */
import { describe, expect, it } from 'vitest';
import {
  type ClientSecret,
  MAX_LIVE_SECRETS,
  planSecretAddition,
  secretRemovalRefusal,
} from '../../lib/clients/secrets.ts';

const NOW = new Date('2026-12-01T12:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();
const secret = (id: string, expiresAt?: string): ClientSecret => ({
  id,
  digest: `digest-${id}`,
  createdAt: at(-86_400),
  ...(expiresAt !== undefined && { expiresAt }),
});

describe('adding a secret', () => {
  it(`refuses one beside ${MAX_LIVE_SECRETS} live secrets, and counts an expired one as gone`, () => {
    expect(planSecretAddition([secret('a'), secret('b')], NOW)).toEqual({ refused: 'secrets-full' });
    const plan = planSecretAddition([secret('a'), secret('b', at(-1))], NOW);
    expect(plan.refused).toBeUndefined();
    if (plan.refused !== undefined) return;
    expect(plan.kept.map((kept) => kept.id)).toEqual(['a']);
    expect(plan.pruned.map((pruned) => pruned.id)).toEqual(['b']);
    expect(plan.ended).toEqual([]);
  });

  it('gives the others the roll-over’s end, or keeps an earlier end they have', () => {
    const plan = planSecretAddition([secret('a', at(60))], NOW, new Date(at(3600)));
    if (plan.refused !== undefined) throw new Error('refused');
    expect(plan.kept).toEqual([secret('a', at(60))]);
    expect(plan.ended).toEqual([]);
    const later = planSecretAddition([secret('a')], NOW, new Date(at(3600)));
    if (later.refused !== undefined) throw new Error('refused');
    expect(later.kept).toEqual([secret('a', at(3600))]);
    expect(later.ended).toEqual([secret('a', at(3600))]);
  });
});

describe('removing a secret', () => {
  it('refuses an unknown or expired one as no such secret, and the last live one', () => {
    expect(secretRemovalRefusal([secret('a')], 'z', NOW)).toBe('no-such-secret');
    expect(secretRemovalRefusal([secret('a'), secret('b', at(-1))], 'b', NOW)).toBe('no-such-secret');
    expect(secretRemovalRefusal([secret('a'), secret('b', at(-1))], 'a', NOW)).toBe('last-live-secret');
    expect(secretRemovalRefusal([secret('a'), secret('b')], 'a', NOW)).toBeUndefined();
  });

  it('keeps the last secret that does not expire, once used, only when asked to (the self-service API’s rule)', () => {
    const rolled = [{ ...secret('a'), lastUsedAt: NOW.toISOString() }, secret('b', at(3600))];
    expect(secretRemovalRefusal(rolled, 'a', NOW)).toBeUndefined();
    expect(secretRemovalRefusal(rolled, 'a', NOW, { keepLasting: true })).toBe('last-lasting-secret');
    expect(secretRemovalRefusal(rolled, 'b', NOW, { keepLasting: true })).toBeUndefined();
  });

  it('lets a last lasting secret that never got a token go, as the one a lost answer left', () => {
    const unseen = [secret('a'), secret('b', at(3600))];
    expect(secretRemovalRefusal(unseen, 'a', NOW, { keepLasting: true })).toBeUndefined();
  });
});
