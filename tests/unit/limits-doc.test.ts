/**
 * docs/integrators.md, "Limits", against serverless.yml: each stage's `RateLimit-Policy` as the
 * functions' own config and lib/http/rate-limit.ts write it from the stage's parameters, the
 * numbers beside it, every policy name explained, and the examples true of the default stage.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionEnvironment } from '../../infra/function-env.ts';
import { serverlessParams } from '../../infra/stage-params.ts';
import { readLoginConfig, readOAuthTokenConfig, readRefreshConfig } from '../../lib/config.ts';
import { rateLimitFields } from '../../lib/http/rate-limit.ts';
import type { QuotaPolicy } from '../../lib/quota.ts';
import { publishedLimits } from '../../lib/wiring/throttle.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STAGES = ['default', 'local', 'dev', 'prod'] as const;
const params = serverlessParams();

const page = readFileSync(resolve(ROOT, 'docs/integrators.md'), 'utf8');
const start = page.indexOf('\n## Limits\n');
const section = page.slice(start, page.indexOf('\n## ', start + 1));
const tableLines = section.split('\n').filter((line) => line.startsWith('|'));
const cellsOf = (line: string) =>
  line
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim());

/** The stage table: its header's stages, and each row's cells by its first cell. */
const stageHeader = tableLines.findIndex((line) => cellsOf(line)[0] === '');
const stageRows = new Map(
  tableLines
    .slice(stageHeader + 2)
    .map(cellsOf)
    .map((cells) => [cells[0] ?? '', cells.slice(1)] as const),
);

/** What a stage's functions publish and the settings the table shows beside it, as it spells them. */
function published(stage: string): Record<string, string> {
  // `${env:…}` defaults: what `npm start` uses without overrides.
  const login = functionEnvironment('login', stage, {});
  const field = (policies: readonly QuotaPolicy[]) =>
    `\`${rateLimitFields(policies)()['RateLimit-Policy']}\``;
  const burst = params[stage]?.loginBurstLimit ?? params.default?.loginBurstLimit;
  return {
    '`RateLimit-Policy` of `/login`, `/login-extended`': field(
      publishedLimits(readLoginConfig(login), false),
    ),
    '`RateLimit-Policy` of `/oauth/token`': field(
      publishedLimits(readOAuthTokenConfig(functionEnvironment('oauthToken', stage, {})), true),
    ),
    '`RateLimit-Policy` of `/token/refresh`': field(
      readRefreshConfig(functionEnvironment('refresh', stage, {})).gatewayLimits,
    ),
    'a lock: first, and longest (each further failure doubles it)': `\`${login.LOGIN_LOCKOUT_BASE}\`, \`${login.LOGIN_LOCKOUT_MAX}\``,
    'attempts of one name checked at once from a source it knows (`loginInflightLimit`; from any other source, `q` of `username` or `client`)': `\`${login.LOGIN_INFLIGHT_LIMIT}\``,
    'a source stays known to a name after its last success for': `\`${login.KNOWN_SOURCE_PERIOD}\``,
    "requests at once above `route` (API Gateway's burst)": `\`${String(burst)}\``,
  };
}

describe('docs/integrators.md, "Limits"', () => {
  it('has a column per stage and a row per published value, and no other', () => {
    expect(cellsOf(tableLines[stageHeader] ?? '').slice(1)).toEqual([...STAGES]);
    expect([...stageRows.keys()]).toEqual(Object.keys(published('default')));
  });

  for (const [column, stage] of STAGES.entries()) {
    it(`shows what ${stage}'s functions publish, from serverless.yml`, () => {
      for (const [row, expected] of Object.entries(published(stage)))
        expect(stageRows.get(row)?.[column], `${stage}: ${row}`).toBe(expected);
    });
  }

  it('explains every policy name a stage publishes', () => {
    const explained = tableLines.flatMap((line) => /^\| `([a-z-]+)` \|/.exec(line)?.[1] ?? []);
    const names = STAGES.flatMap((stage) =>
      Object.values(published(stage))
        .filter((cell) => cell.startsWith('`"'))
        .flatMap((cell) => [...cell.matchAll(/"([a-z-]+)"/g)].map((match) => match[1])),
    );
    expect(new Set(explained)).toEqual(new Set(names));
  });

  it('gives examples the default stage would send', () => {
    const examples = [...section.matchAll(/^RateLimit-Policy: (.*)$/gm)].map((match) => `\`${match[1]}\``);
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples)
      expect(example).toBe(published('default')['`RateLimit-Policy` of `/login`, `/login-extended`']);
  });
});
