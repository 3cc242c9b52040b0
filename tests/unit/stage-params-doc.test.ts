/**
 * docs/stages.md's table of stage parameters against serverless.yml `params:`: every parameter
 * has a row, every stage's value is in its cell, and a stage that sets nothing has an empty cell.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { variableParameters } from '../../infra/function-env.ts';
import { OptionalDurationSchema, SETTINGS } from '../../lib/config.js';

const ROOT = resolve(import.meta.dirname, '../..');
const params: Record<string, Record<string, unknown>> = parse(
  readFileSync(resolve(ROOT, 'serverless.yml'), 'utf8'),
).params;
const STAGES = ['default', 'local', 'dev', 'prod'] as const;

// The whole document is the one table and the prose around it.
const section = readFileSync(resolve(ROOT, 'docs/stages.md'), 'utf8');
const rows = new Map(
  section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim());
      return [cells[0]?.replaceAll('`', '') ?? '', cells.slice(1)] as const;
    }),
);

/** What docs/stages.md should show for a value: literal values in backticks, env overrides named. */
function expectedCell(value: unknown): RegExp | undefined {
  // serverless.yml's own variables, as docs/stages.md spells them.
  const text = String(value)
    .replace(/\$\{self:service\}/g, 'parcel-auth')
    .replace(/\$\{sls:stage\}/g, '<stage>');
  const env = /^\$\{env:(\w+), '([^']*)'\}$/.exec(text);
  if (env) return new RegExp(`\`${escapeRegExp(env[2] ?? '')}\` or \`\\$${env[1]}\``);
  if (text.includes('${') || text === '') return undefined; // described in words
  return new RegExp(`\`${escapeRegExp(text)}\``);
}
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The upper bound a schema's pipe sets (valibot's `maxValue`), if any. */
function maxValueOf(schema: v.GenericSchema): unknown {
  const pipe: readonly { type: string; requirement?: unknown }[] =
    'pipe' in schema ? (schema.pipe as never) : [];
  return pipe.find((item) => item.type === 'max_value')?.requirement;
}

describe('docs/stages.md stage parameter table', () => {
  it('has a row for every parameter, and no row for a parameter that does not exist', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(params.default ?? {}).sort());
  });

  it('names only parameters the default block defines', () => {
    for (const stage of STAGES) {
      for (const name of Object.keys(params[stage] ?? {}))
        expect(params.default, `${stage}.${name}`).toHaveProperty(name);
    }
  });

  for (const [column, stage] of STAGES.entries()) {
    it(`shows ${stage}'s value of every parameter it sets, and leaves the rest empty`, () => {
      for (const [name, cells] of rows) {
        const cell = cells[column] ?? '';
        const stageParams = params[stage] ?? {};
        if (!(name in stageParams)) {
          expect(cell, `${stage}.${name}`).toBe('');
          continue;
        }
        const expected = expectedCell(stageParams[name]);
        if (expected === undefined) expect(cell, `${stage}.${name}`).not.toBe('');
        else expect(cell, `${stage}.${name}`).toMatch(expected);
      }
    });
  }

  it('states in "What it changes" the upper bound each function variable\'s schema sets, and no other', () => {
    for (const [variable, param] of Object.entries(variableParameters())) {
      if (!Object.hasOwn(SETTINGS, variable)) continue; // LOG_LEVEL: lib/log.ts reads it
      const schema = SETTINGS[variable as keyof typeof SETTINGS];
      const stated = /at most `([^`]+)`/.exec(rows.get(param)?.at(-1) ?? '')?.[1];
      const max = maxValueOf(schema);
      if (max === undefined) expect(stated, param).toBeUndefined();
      else expect(stated === undefined ? undefined : v.parse(schema, stated), param).toBe(max);
    }
  });

  it('sets in local, dev and prod each value an operator tunes per stage', () => {
    const perStage = [
      'accessTokenTtl',
      'refreshTokenTtl',
      'bcryptCost',
      'importBcryptMaxCost',
      'logLevel',
      'authorizerCacheTtl',
      'apiRateLimit',
      'apiBurstLimit',
      'loginRateLimit',
      'loginBurstLimit',
      'loginFailureLimit',
      'ipFailureLimit',
      'loginLockoutBase',
      'loginLockoutMax',
      'logRetentionDays',
      'alarmTopic',
    ];
    for (const stage of ['local', 'dev', 'prod']) {
      for (const name of perStage) expect(params[stage], `${stage}.${name}`).toHaveProperty(name);
    }
  });

  it("states each stage's revocation bound as revocationCacheTtl + authorizerCacheTtl + 1 s", () => {
    const row = section.split('\n').find((line) => line.startsWith('| revocation bound'));
    expect(row, 'docs/stages.md row "revocation bound"').toBeDefined();
    const cells = (row ?? '')
      .slice(1, -1)
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    for (const [column, stage] of STAGES.entries()) {
      const value = (name: string) => params[stage]?.[name] ?? params.default?.[name];
      // An env override's default is what the document's own row shows.
      const revocation = String(value('revocationCacheTtl')).replace(/^\$\{env:\w+, '([^']*)'\}$/, '$1');
      const bound = v.parse(OptionalDurationSchema, revocation) + Number(value('authorizerCacheTtl')) + 1;
      expect(cells[column], stage).toBe(`\`${bound} s\``);
    }
  });
});
