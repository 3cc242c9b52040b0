/**
 * Reads a stage's literal parameters from serverless.yml (`params.<stage>` over
 * `params.default`), so the admin CLI hashes passwords at the same bcrypt cost the stage's
 * functions use, without a second copy of the number.
 */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { parse } from 'yaml';

const SERVERLESS_FILE = new URL('../../serverless.yml', import.meta.url);

const ParamsSchema = v.object({
  bcryptCost: v.pipe(v.number(), v.integer(), v.minValue(4), v.maxValue(15)),
});

export type StageParams = v.InferOutput<typeof ParamsSchema>;

export function readStageParams(stage: string): StageParams {
  const doc = parse(readFileSync(SERVERLESS_FILE, 'utf8'), { logLevel: 'silent' }) as {
    params?: Record<string, Record<string, unknown>>;
  };
  const merged = { ...doc.params?.default, ...doc.params?.[stage] };
  const result = v.safeParse(ParamsSchema, merged);
  if (!result.success) throw new Error(`serverless.yml params for stage ${stage} are not usable`);
  return result.output;
}
