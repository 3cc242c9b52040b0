/**
 * What the deployed artifacts weigh and how long they take to start: the bundles (section 4),
 * the cold start proxies (section 5) and the cold init they sum up to.
 */
import { kib, plainMs, table } from './report-format.ts';
import type { BenchResults } from './report-run.ts';
import { type Bundle, CLIENT_PER_STORE, type ColdStartResult, type FloorBundle } from './results.ts';

/** The authorizer floor the design can reach: AWS stages read the key set from SSM. */
export const REACHABLE_FLOOR = 'floor: jose + GetItem + SSM';
/** The size floor of an authorizer that keeps its logs and metrics, with the stack's tools (Powertools). */
export const LOGGED_FLOOR = 'floor: jose + GetItem + SSM + logs and metrics';
export const BARE_FLOOR = 'floor: jose + GetItem';

/** A cold-start variant's time beyond its function's empty handler. */
export function beyondEmpty(result: ColdStartResult, fn: string, variant: string): number | undefined {
  const found = result.functions.find((candidate) => candidate.function === fn);
  const sample = found?.variants[variant];
  const empty = found?.variants.empty;
  return sample === undefined || empty === undefined ? undefined : sample.totalMs - empty.totalMs;
}

/** Lambda's Init is the module's import; the first invoke pays what the function does lazily. */
export function coldInitSection(results: BenchResults): string {
  const rows: string[][] = [];
  for (const fn of results.coldStart.functions) {
    const bundled = fn.variants.bundled;
    if (bundled === undefined) continue;
    rows.push([
      fn.function,
      plainMs(bundled.importMs),
      plainMs(bundled.firstCallMs),
      `+${plainMs(beyondEmpty(results.coldStart, fn.function, 'bundled') ?? 0)}`,
    ]);
    const perStore = fn.variants[CLIENT_PER_STORE];
    if (perStore !== undefined) {
      rows.push([
        `${fn.function}, a DynamoDB client per store (before one per container)`,
        plainMs(perStore.importMs),
        plainMs(perStore.firstCallMs),
        `+${plainMs(beyondEmpty(results.coldStart, fn.function, CLIENT_PER_STORE) ?? 0)}`,
      ]);
    }
    if (fn.function === 'authorizer') {
      for (const floor of [BARE_FLOOR, REACHABLE_FLOOR]) {
        const sample = fn.variants[floor];
        if (sample === undefined) continue;
        rows.push([
          `authorizer's ${floor}`,
          plainMs(sample.importMs),
          plainMs(sample.firstCallMs),
          `+${plainMs(beyondEmpty(results.coldStart, fn.function, floor) ?? 0)}`,
        ]);
      }
    }
  }
  return [
    '## Cold init per function',
    '',
    'The deployed bundle in a fresh Node.js process (medians of section 5): Init is its import, the',
    'first call what the first invocation pays on top; each container builds one DynamoDB client.',
    'What these figures leave out: [performance-design.md](performance-design.md#cold-init-per-function).',
    '',
    table(['Function', 'Init (import)', 'First call', 'Beyond an empty handler'], rows),
    '',
  ].join('\n');
}

export function bundlesSection(bundles: readonly Bundle[], floors: readonly FloorBundle[]): string {
  const rows = bundles.map((bundle) => [
    bundle.function,
    kib(bundle.zipBytes),
    `\`${bundle.entry}\``,
    kib(bundle.rawBytes),
    kib(bundle.gzipBytes),
  ]);
  const floorRowsOf = floors.map((floor) => [
    `${floor.function}'s ${floor.floor}`,
    '—',
    '`dev/bench/floors/authorizer.ts`',
    kib(floor.rawBytes),
    kib(floor.gzipBytes),
  ]);
  return [
    '## 4. Bundles (`serverless package --stage prod`)',
    '',
    table(['Function', 'Zip (deployed)', 'Bundle', 'Bundle raw', 'Bundle gzip'], [...rows, ...floorRowsOf]),
    '',
    'The floors are built with serverless.yml’s esbuild options, as the functions are:',
    '[performance-design.md](performance-design.md#how-to-read-performancemd).',
    '',
  ].join('\n');
}

export function coldStartSection(result: ColdStartResult): string {
  const rows: string[][] = [];
  for (const fn of result.functions) {
    const empty = fn.variants.empty;
    for (const [variant, sample] of Object.entries(fn.variants)) {
      rows.push([
        variant === 'empty' ? `${fn.function} (empty handler)` : `${fn.function}, ${variant}`,
        plainMs(sample.startMs),
        plainMs(sample.importMs),
        plainMs(sample.firstCallMs),
        plainMs(sample.totalMs),
        variant === 'empty' || empty === undefined ? '' : `+${plainMs(sample.totalMs - empty.totalMs)}`,
        sample.statuses.join(', '),
        String(sample.runs),
      ]);
    }
  }
  return [
    '## 5. Cold start proxies (fresh Node.js process: import and first call)',
    '',
    table(
      [
        'Function, variant',
        'Node.js start',
        'Import',
        'First call',
        'Total',
        'Beyond the empty handler',
        'First answer',
        'Runs',
      ],
      rows,
    ),
    '',
    ...result.functions.flatMap((fn) => (fn.note === undefined ? [] : [fn.note, ''])),
  ].join('\n');
}
