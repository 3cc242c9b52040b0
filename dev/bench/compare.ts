/**
 * A bare bcryptjs compare at each cost an import may bring (COMPARE_COSTS), interleaved: what a
 * login of a user imported at that cost takes until its first login re-hashes the password at
 * the stage's cost, and what sets each stage's importBcryptMaxCost (docs/import-format.md).
 */
import bcrypt from 'bcryptjs';
import { readStageParams } from '../../infra/stage-params.ts';
import { interleaved, type Plan } from './measure.ts';
import type { CompareResult } from './results.ts';
import { PASSWORD } from './stage.ts';

/** From the local stage's own cost to one above prod's importBcryptMaxCost. */
export const COMPARE_COSTS = [8, 9, 10, 11, 12, 13, 14] as const;

/** The stages an operator imports into; their params come from serverless.yml. */
const STAGES = ['dev', 'prod'] as const;

export async function comparePart(options: { plan: Plan }): Promise<CompareResult> {
  // Hashing at 14 takes a second: once, outside the timing.
  const hashes = new Map(COMPARE_COSTS.map((cost) => [cost, bcrypt.hashSync(PASSWORD, cost)]));
  const samples = await interleaved(
    COMPARE_COSTS.map((cost) => ({
      name: String(cost),
      run: async () => {
        if (!(await bcrypt.compare(PASSWORD, hashes.get(cost) ?? ''))) throw new Error('compare failed');
      },
    })),
    options.plan,
  );
  return {
    part: 'compare',
    costs: COMPARE_COSTS.map((cost) => {
      const sample = samples[String(cost)];
      if (sample === undefined) throw new Error(`no sample at cost ${cost}`);
      return { cost, sample };
    }),
    stages: STAGES.map((stage) => {
      const { importBcryptMaxCost, loginMemorySize } = readStageParams(stage);
      return { stage, importBcryptMaxCost, loginMemorySize };
    }),
  };
}
