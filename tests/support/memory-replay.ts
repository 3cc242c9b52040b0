/** An in-memory ReplayStore for unit tests of grants: what the DynamoDB one spends, in a Map. */
import type { ReplayStore } from '../../lib/replay/replay.ts';

export function memoryReplay(): ReplayStore & { readonly spent: Map<string, string> } {
  const spent = new Map<string, string>();
  return {
    spent,
    async spend(owner, jti, _keepUntil, spender) {
      const key = `${owner}#${jti}`;
      const by = spent.get(key);
      if (by !== undefined) return by === spender;
      spent.set(key, spender);
      return true;
    },
  };
}
