/**
 * The bench's interleaving (dev/bench/measure.ts): the rounds' orders form a Williams design, so
 * no variant is always timed right after the same neighbour.
 */
import { describe, expect, it } from 'vitest';
import { williamsOrders } from '../../dev/bench/measure.ts';

describe('the bench’s round orders', () => {
  for (const n of [2, 3, 4, 5, 6, 7]) {
    it(`puts each of ${n} variants first, and after each other, equally often`, () => {
      const orders = williamsOrders(n);
      for (const order of orders) expect([...order].sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
      const firsts = new Map<number, number>();
      const follows = new Map<string, number>();
      for (const order of orders) {
        firsts.set(order[0] ?? -1, (firsts.get(order[0] ?? -1) ?? 0) + 1);
        for (let i = 1; i < n; i++) {
          const pair = `${order[i - 1]}>${order[i]}`;
          follows.set(pair, (follows.get(pair) ?? 0) + 1);
        }
      }
      expect(firsts.size).toBe(n);
      expect(new Set(firsts.values()).size).toBe(1);
      expect(follows.size, 'every ordered pair').toBe(n * (n - 1));
      expect(new Set(follows.values()).size, 'each as often').toBe(1);
    });
  }
});
