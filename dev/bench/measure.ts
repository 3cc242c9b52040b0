/**
 * Interleaved timing on a noisy machine: every round runs each variant for the same number
 * of calls, one variant after the other, and keeps the round's mean per call. A variant's figure
 * is the median of its round means: a GC pause or a neighbour's burst spoils a round or two, not
 * the result. Warm-up calls before the first round are discarded.
 *
 * The rounds' orders are a Williams design (balanced for first-order carry-over, as crossover
 * trials are): each variant goes first equally often and follows each other variant equally
 * often. A batch is slower right after another kind of work (the authorizer ran ~20 µs a call
 * slower after the floor's synchronous verifies than after jose's), and a plain rotation (A, B,
 * C, then B, C, A) keeps the same neighbour before each variant in every round.
 */
import { performance } from 'node:perf_hooks';

export interface Variant<TName extends string = string> {
  readonly name: TName;
  /**
   * Untimed, before each batch of `calls` calls: e.g. fresh copies of an event a handler changes,
   * or state the calls change set back.
   */
  readonly prepare?: (calls: number) => void | Promise<void>;
  /** One call; `index` counts within the batch. */
  readonly run: (index: number) => unknown;
}

export interface Plan {
  readonly warmup: number;
  readonly rounds: number;
  readonly calls: number;
}

/** One variant's timing, in microseconds per call. */
export interface Sample {
  readonly medianUs: number;
  readonly p25Us: number;
  readonly p75Us: number;
  readonly rounds: number;
  readonly callsPerRound: number;
}

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  const lowValue = sorted[low] ?? Number.NaN;
  const highValue = sorted[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (at - low);
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

async function batch(variant: Variant, calls: number): Promise<number> {
  await variant.prepare?.(calls);
  const start = performance.now();
  for (let index = 0; index < calls; index++) {
    const result = variant.run(index);
    if (result instanceof Promise) await result;
  }
  return ((performance.now() - start) * 1000) / calls;
}

/**
 * The orders of a Williams design for `n` variants: n rows for an even n, 2n for an odd one
 * (each row then reversed as well), in which every variant follows every other equally often.
 */
export function williamsOrders(n: number): number[][] {
  // 0, 1, n-1, 2, n-2, …: each difference between neighbours once.
  const first = Array.from({ length: n }, (_, i) => (i % 2 === 1 ? (i + 1) / 2 : (n - i / 2) % n));
  const rows = Array.from({ length: n }, (_, shift) => first.map((variant) => (variant + shift) % n));
  return n % 2 === 0 ? rows : [...rows, ...rows.map((row) => [...row].reverse())];
}

/** Runs `variants` interleaved under `plan`; resolves with each one's Sample by name. */
export async function interleaved<TName extends string>(
  variants: readonly Variant<TName>[],
  plan: Plan,
): Promise<Record<TName, Sample>> {
  for (const variant of variants) {
    await variant.prepare?.(plan.warmup);
    for (let index = 0; index < plan.warmup; index++) await variant.run(index);
  }
  const means = new Map<TName, number[]>(variants.map((variant) => [variant.name, []]));
  const orders = williamsOrders(variants.length);
  for (let round = 0; round < plan.rounds; round++) {
    for (const index of orders[round % orders.length] ?? []) {
      const variant = variants[index];
      if (variant === undefined) continue;
      means.get(variant.name)?.push(await batch(variant, plan.calls));
    }
  }
  // Every variant's name has its entry: `means` was made from them.
  return Object.fromEntries(
    [...means].map(([name, values]): [TName, Sample] => [
      name,
      {
        medianUs: median(values),
        p25Us: quantile(values, 0.25),
        p75Us: quantile(values, 0.75),
        rounds: plan.rounds,
        callsPerRound: plan.calls,
      },
    ]),
  ) as Record<TName, Sample>;
}
