/**
 * The order a run starts its files in: the longest first, across its projects, so the files
 * that start last are short ones and the workers finish together.
 *
 * vitest's own sequencer runs the projects' files in project name order (e2e, integration,
 * unit) and, on a clean clone with no durations recorded, larger files first. The fault
 * matrix's sample (tests/integration/faults/api.test.ts), the longest file at minutes but a
 * short file, then started late and ran on alone at the run's end.
 *
 * A file's expected duration is its last run's where vitest recorded one (under
 * node_modules/.vite), and otherwise a guess from what it starts: a fault matrix, a local stack
 * (every e2e file), DynamoDB (integration) or nothing (unit). Larger files first among equals,
 * and a file that failed last time before all.
 */
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds a file of each kind takes on this machine, roughly, when run among the others. */
const GUESS_SECONDS: readonly (readonly [RegExp, number])[] = [
  [/\/tests\/integration\/faults\//, 60],
  [/\/tests\/e2e\//, 30],
  [/\/tests\/integration\//, 10],
];
const UNIT_GUESS_SECONDS = 1;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const expected = new Map(
      files.map((spec) => {
        const result = this.ctx.cache.getTestSpecificationResult(spec);
        const recorded = result?.duration;
        const guess =
          (GUESS_SECONDS.find(([kind]) => kind.test(spec.moduleId))?.[1] ?? UNIT_GUESS_SECONDS) * 1000;
        return [
          spec,
          { ms: recorded ?? guess, size: statSync(spec.moduleId).size, failed: result?.failed === true },
        ] as const;
      }),
    );
    const of = (spec: TestSpecification) => expected.get(spec) ?? { ms: 0, size: 0, failed: false };
    // As vitest's own: a file that failed last time first, to tell at once whether it still does.
    return [...files].sort(
      (a, b) => Number(of(b).failed) - Number(of(a).failed) || of(b).ms - of(a).ms || of(b).size - of(a).size,
    );
  }
}
