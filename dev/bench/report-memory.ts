/**
 * The login functions at Lambda's memory sizes: a model of latency and cost from sections 2
 * and 3 (section 7), and an imported hash's bcrypt compare at each stage's login memory (section 10).
 */
import { ms, plainMs, plan, spread, table, times, verdict } from './report-format.ts';
import type { BenchResults } from './report-run.ts';
import type { CompareResult } from './results.ts';

/** Lambda's CPU share: one full vCPU at 1,769 MB, in proportion below. */
const LAMBDA_FULL_VCPU_MB = 1769;
/** arm64 list prices (eu-central-1 and us-east-1 at the time of writing). */
const PRICE_PER_GB_SECOND = 0.0000133334;
const PRICE_PER_MILLION_REQUESTS = 0.2;
/** An assumed DynamoDB round trip inside one AWS region, in ms. */
const AWS_ROUND_TRIP_MS = 5;
export const SIZING_MEMORY_MB = [512, 1024, 1769, 2048] as const;

/** Login latency and cost per million at several memory sizes, modelled from section 2. */
export function sizing(results: BenchResults) {
  const cost10 = results.login.find((result) => result.cost === 10);
  const trips = results.roundTrips.operations.find((op) => op.operation === 'login');
  if (cost10 === undefined || trips === undefined) return undefined;
  const { login, getItem } = cost10.samples;
  const steps = trips.sequential;
  // CPU time of one login on one core of this machine: the login less its waits on DynamoDB,
  // every request of which the embedded DynamoDB answers in turn (as in section 2).
  const cpuMs = (login.medianUs - trips.total * getItem.medianUs) / 1000;
  const rows = SIZING_MEMORY_MB.map((memoryMb) => {
    const share = Math.min(1, memoryMb / LAMBDA_FULL_VCPU_MB);
    const latencyMs = cpuMs / share + steps * AWS_ROUND_TRIP_MS;
    const billedMs = Math.ceil(latencyMs);
    const perMillion =
      (billedMs / 1000) * (memoryMb / 1024) * PRICE_PER_GB_SECOND * 1e6 + PRICE_PER_MILLION_REQUESTS;
    return { memoryMb, share, latencyMs, perMillion };
  });
  return { cpuMs, steps, requests: trips.total, rows };
}

export function sizingSection(results: BenchResults): string {
  const model = sizing(results);
  if (model === undefined) return '';
  return [
    '## 7. Lambda memory for the login functions (a model from sections 2 and 3)',
    '',
    table(
      ['Memory', 'vCPU share', 'Login latency', 'Cost per million logins'],
      model.rows.map((row) => [
        `${row.memoryMb} MB`,
        row.share.toFixed(2),
        plainMs(row.latencyMs),
        `$${row.perMillion.toFixed(2)}`,
      ]),
    ),
    '',
    `Assumptions: one login is ${plainMs(model.cpuMs)} of CPU on one core of this machine (the cost-10 login`,
    `less its ${model.requests} DynamoDB requests at the loopback GetItem time), taken as equal to one Lambda vCPU;`,
    `Lambda gives ${LAMBDA_FULL_VCPU_MB} MB one vCPU and less memory a proportional share; bcryptjs runs on one`,
    `thread, so more than one vCPU does not help; each DynamoDB step costs ${AWS_ROUND_TRIP_MS} ms in the region;`,
    `arm64 at $${PRICE_PER_GB_SECOND} per GB-second, billed per started ms, and $${PRICE_PER_MILLION_REQUESTS.toFixed(2)} per million requests`,
    '(eu-central-1 list prices at the time of writing; check the current price list).',
    '',
  ].join('\n');
}

/**
 * The most a compare at a stage's importBcryptMaxCost may take at its login memory: a tenth of
 * the login's 10 s timeout, which must also hold a cold start and two DynamoDB steps of up to
 * 3.5 s each in retries (lib/aws/requests.ts).
 */
const IMPORT_COMPARE_BUDGET_MS = 1000;

export function compareSection(result: CompareResult): string {
  const share = (memoryMb: number) => Math.min(1, memoryMb / LAMBDA_FULL_VCPU_MB);
  const memories = [...new Set(result.stages.map((stage) => stage.loginMemorySize))].sort((a, b) => a - b);
  const at10 = result.costs.find(({ cost }) => cost === 10)?.sample.medianUs ?? Number.NaN;
  const rows = result.costs.map(({ cost, sample }) => [
    String(cost),
    ms(sample.medianUs),
    spread(sample, ms),
    plan(sample),
    times(sample.medianUs / at10),
    ...memories.map((memoryMb) => ms(sample.medianUs / share(memoryMb))),
  ]);
  const stages = result.stages.map(({ stage, importBcryptMaxCost, loginMemorySize }) => {
    const sample = result.costs.find(({ cost }) => cost === importBcryptMaxCost)?.sample;
    const there = sample === undefined ? Number.NaN : sample.medianUs / share(loginMemorySize);
    return [
      stage,
      String(importBcryptMaxCost),
      `${loginMemorySize} MB`,
      sample === undefined ? 'not measured' : ms(there),
      verdict(sample === undefined ? undefined : there / 1000 <= IMPORT_COMPARE_BUDGET_MS),
    ];
  });
  return [
    '## 10. bcrypt compare per cost (imported hashes)',
    '',
    'A bare bcryptjs `compare` of the same password at each cost an import may bring: a user imported',
    'at another cost than the stage’s `bcryptCost` logs in at that cost until the first login re-hashes',
    'the password ([import-format.md](import-format.md#hashes-above-the-stages-cost)). The memory columns',
    'scale one core of this machine to the login memory’s vCPU share, as section 7 does.',
    '',
    table(
      [
        'Cost',
        'Median per call',
        'Round means p25 – p75',
        'Rounds × calls',
        '÷ cost 10',
        ...memories.map((memoryMb) => `At ${memoryMb} MB (${share(memoryMb).toFixed(2)} vCPU)`),
      ],
      rows,
    ),
    '',
    table(
      [
        'Stage',
        '`importBcryptMaxCost`',
        'Login memory',
        'Compare at that cost there',
        `Within ${IMPORT_COMPARE_BUDGET_MS / 1000} s`,
      ],
      stages,
    ),
    '',
  ].join('\n');
}
