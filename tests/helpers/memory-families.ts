/** An in-memory FamilyStore for domain unit tests, with the conditions of the DynamoDB one. */
import type { Family, FamilyStore } from '../../lib/sessions/repository.ts';

export function memoryFamilies(): FamilyStore & { readonly all: ReadonlyMap<string, Family> } {
  const families = new Map<string, Family>();
  const live = (family: Family | undefined, now: Date): family is Family =>
    family !== undefined && family.revokedAt === null && family.expiresAt > Math.floor(now.getTime() / 1000);
  return {
    all: families,
    async create(family) {
      if (families.has(family.familyId)) throw new Error('family exists');
      families.set(family.familyId, {
        ...family,
        previousJti: null,
        previousSpentAt: null,
        generation: 1,
        revokedAt: null,
        revokedReason: null,
      });
    },
    async rotate({ familyId, username, fromJti, toJti, now }) {
      const family = families.get(familyId);
      if (!live(family, now) || family.currentJti !== fromJti || family.username !== username) return null;
      const next = {
        ...family,
        currentJti: toJti,
        previousJti: fromJti,
        previousSpentAt: now.getTime(),
        generation: family.generation + 1,
      };
      families.set(familyId, next);
      return next;
    },
    async get(familyId) {
      return families.get(familyId) ?? null;
    },
    async revoke(familyId, reason, now) {
      const family = families.get(familyId);
      if (family === undefined || family.revokedAt !== null) return;
      families.set(familyId, { ...family, revokedAt: now.getTime(), revokedReason: reason });
    },
  };
}
