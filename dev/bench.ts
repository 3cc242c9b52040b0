/**
 * `npm run bench`: measures the authorizer, the login functions, the client credentials grant,
 * their DynamoDB round trips and the deployed bundles, each against a floor measured in the same run, and writes
 * docs/PERFORMANCE.md and its chart docs/performance-floors.svg (see the report for how to
 * read it).
 *
 *   node dev/bench.ts                  the full run; rewrites docs/PERFORMANCE.md and the chart
 *   node dev/bench.ts --quick          a smoke run of a few iterations, for CI; the report
 *                                          goes to --out FILE (the chart beside it), or to
 *                                          stdout; never to docs/
 *   node dev/bench.ts --out FILE       the report to FILE instead, the chart beside it
 *
 * The parent starts the embedded DynamoDB and runs each timed part in a child process of its
 * own (`--part authorizer|login|compare|grant|platform|round-trips|cold-start|load|import`), which prints its
 * result as one JSON line. The cold-start part runs the bundles `serverless package` built, so
 * it comes after.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { cpus, platform, release, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { authorizerPart } from './bench/authorizer.ts';
import { buildAuthorizerFloors, measureBundles } from './bench/bundles.ts';
import { coldStartPart } from './bench/cold-start.ts';
import { comparePart } from './bench/compare.ts';
import { grantPart } from './bench/grant.ts';
import { importPart } from './bench/import.ts';
import { loadPart } from './bench/load.ts';
import { loginPart } from './bench/login.ts';
import type { Plan } from './bench/measure.ts';
import { platformPart } from './bench/platform.ts';
import { type BenchResults, CHART_FILE, type Machine, renderChart, renderReport } from './bench/report.ts';
import {
  type AuthorizerResult,
  type ColdStartResult,
  type CompareResult,
  type GrantResult,
  type ImportBenchResult,
  type LoadResult,
  type LoginResult,
  type PartResult,
  type PlatformResult,
  RESULT_MARKER,
  type RoundTripsResult,
} from './bench/results.ts';
import { roundTripsPart } from './bench/round-trips.ts';
import { startDynalite } from './local/dynalite.ts';

const ROOT = resolve(import.meta.dirname, '..');
const REPORT = resolve(ROOT, 'docs/PERFORMANCE.md');

/** Calls per part: bounded so a full run takes minutes (the report's head says how many). */
const PLANS = {
  full: {
    authorizerCached: { warmup: 2000, rounds: 61, calls: 400 },
    authorizerUncached: { warmup: 200, rounds: 51, calls: 60 },
    login4: { warmup: 30, rounds: 41, calls: 15 },
    login10: { warmup: 3, rounds: 41, calls: 3 },
    // A round of one compare per cost takes about 1.8 s (cost 14 alone 0.9 s).
    compare: { warmup: 1, rounds: 7, calls: 1 },
    grant: { warmup: 50, rounds: 41, calls: 20 },
    // Twelve variants, most calls with a code or refresh token minted before their batch (a
    // refresh token by a code exchange of its own): a round is dear.
    platform: { warmup: 20, rounds: 21, calls: 10 },
    coldStartRuns: 21,
    loadSeconds: 10,
    importUsers: 100_000,
  },
  quick: {
    authorizerCached: { warmup: 5, rounds: 3, calls: 5 },
    authorizerUncached: { warmup: 5, rounds: 3, calls: 5 },
    login4: { warmup: 2, rounds: 3, calls: 2 },
    login10: { warmup: 1, rounds: 2, calls: 1 },
    compare: { warmup: 0, rounds: 1, calls: 1 },
    grant: { warmup: 2, rounds: 3, calls: 2 },
    platform: { warmup: 1, rounds: 2, calls: 1 },
    coldStartRuns: 1,
    loadSeconds: 1,
    importUsers: 500,
  },
} satisfies Record<string, Record<string, Plan | number>>;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    part: { type: 'string' },
    endpoint: { type: 'string' },
    cost: { type: 'string' },
    'revocation-cache': { type: 'string' },
    artifacts: { type: 'string' },
  },
});

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

async function runPart(part: string, endpoint: string): Promise<PartResult> {
  const plans = args.quick ? PLANS.quick : PLANS.full;
  switch (part) {
    case 'authorizer': {
      const revocationCacheTtl = args['revocation-cache'] ?? '30s';
      const plan = revocationCacheTtl === '0s' ? plans.authorizerUncached : plans.authorizerCached;
      return authorizerPart({ endpoint, revocationCacheTtl, plan });
    }
    case 'login': {
      const cost = Number(args.cost ?? '10');
      return loginPart({ endpoint, cost, plan: cost >= 10 ? plans.login10 : plans.login4 });
    }
    case 'compare':
      return comparePart({ plan: plans.compare });
    case 'grant':
      return grantPart({ endpoint, plan: plans.grant });
    case 'platform':
      return platformPart({ endpoint, plan: plans.platform });
    case 'round-trips':
      return roundTripsPart({ endpoint });
    case 'cold-start': {
      if (args.artifacts === undefined) throw new Error('--part cold-start needs --artifacts');
      return coldStartPart({ endpoint, artifacts: args.artifacts, runs: plans.coldStartRuns });
    }
    case 'load':
      return loadPart({ seconds: plans.loadSeconds });
    case 'import':
      return importPart({ endpoint, users: plans.importUsers });
    default:
      throw new Error(`unknown part ${part}`);
  }
}

/** Runs `node dev/bench.ts --part …` and resolves with the result it prints. */
function child(partArgs: readonly string[], endpoint: string): Promise<PartResult> {
  const childArgs = [
    import.meta.filename,
    ...partArgs,
    '--endpoint',
    endpoint,
    ...(args.quick ? ['--quick'] : []),
  ];
  const process_: ChildProcess = spawn(process.execPath, childArgs, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  process_.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  // Drained (the handlers log at info, as in production); the tail kept for an error message.
  process_.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8192);
  });
  return new Promise((resolveResult, reject) => {
    process_.once('error', reject);
    process_.once('close', (code) => {
      const line = stdout.split('\n').find((text) => text.startsWith(RESULT_MARKER));
      if (code !== 0 || line === undefined) {
        reject(new Error(`bench ${partArgs.join(' ')} exited with ${code}:\n${stderr}`));
        return;
      }
      resolveResult(JSON.parse(line.slice(RESULT_MARKER.length)) as PartResult);
    });
  });
}

function git(...gitArgs: string[]): string {
  try {
    return execFileSync('git', ['--no-optional-locks', ...gitArgs], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function machine(): Machine {
  const cores = cpus();
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  // The report itself does not count: rewriting it is what a run does.
  const dirty =
    git(
      'status',
      '--porcelain',
      '--untracked-files=no',
      '--',
      '.',
      ':!docs/PERFORMANCE.md',
      `:!docs/${CHART_FILE}`,
    ) !== '';
  return {
    cpu: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    memoryGiB: totalmem() / 1024 ** 3,
    os: `${platform()} ${release()} ${process.arch}`,
    node: process.version,
    commit: dirty ? `${commit} (with uncommitted changes)` : commit,
  };
}

function only<T extends PartResult>(parts: readonly PartResult[], name: T['part']): T {
  const found = parts.find((part) => part.part === name);
  if (found === undefined) throw new Error(`no ${name} result`);
  return found as T;
}

async function main() {
  const started = performance.now();
  const dynamo = await startDynalite({ port: 0 });
  const parts: PartResult[] = [];
  let bundles: Awaited<ReturnType<typeof measureBundles>>;
  let floors: Awaited<ReturnType<typeof buildAuthorizerFloors>>;
  // Inside the project, so the authorizer's bundle finds the AWS SDK in node_modules as it
  // finds the runtime's on Lambda.
  const artifacts = resolve(ROOT, `.esbuild/bench-artifacts-${process.pid}`);
  await mkdir(artifacts, { recursive: true });
  try {
    const runs = [
      ['--part', 'authorizer', '--revocation-cache', '30s'],
      ['--part', 'authorizer', '--revocation-cache', '0s'],
      ['--part', 'login', '--cost', '4'],
      ['--part', 'login', '--cost', '10'],
      ['--part', 'compare'],
      ['--part', 'grant'],
      ['--part', 'platform'],
      ['--part', 'round-trips'],
    ];
    const coldStart = ['--part', 'cold-start', '--artifacts', artifacts];
    const load = ['--part', 'load'];
    const bulkImport = ['--part', 'import'];
    if (args.quick) {
      // Nothing is worth timing in a smoke run: everything at once.
      const [results, built] = await Promise.all([
        Promise.all([...runs, load, bulkImport].map((run) => child(run, dynamo.endpoint))),
        measureBundles(artifacts).then(async (built) => {
          const builtFloors = await buildAuthorizerFloors(artifacts);
          parts.push(await child(coldStart, dynamo.endpoint));
          return { built, builtFloors };
        }),
      ]);
      parts.push(...results);
      bundles = built.built;
      floors = built.builtFloors;
    } else {
      // One at a time, so no part competes with another for the two cores.
      for (const run of runs) {
        log(run.slice(1).join(' '));
        parts.push(await child(run, dynamo.endpoint));
      }
      log('serverless package');
      bundles = await measureBundles(artifacts);
      floors = await buildAuthorizerFloors(artifacts);
      for (const run of [coldStart, load]) {
        log(run[1] ?? '');
        parts.push(await child(run, dynamo.endpoint));
      }
      // The import writes 690,000 items in three passes: on an embedded DynamoDB of its own,
      // so what the earlier parts left in the other one weighs on neither the import nor its floor.
      log(bulkImport[1] ?? '');
      const own = await startDynalite({ port: 0 });
      try {
        parts.push(await child(bulkImport, own.endpoint));
      } finally {
        await own.close();
      }
    }
  } finally {
    await dynamo.close();
    await rm(artifacts, { recursive: true, force: true });
  }
  const roundTrips = only<RoundTripsResult>(parts, 'round-trips');
  const results: BenchResults = {
    date: new Date(),
    quick: args.quick,
    seconds: (performance.now() - started) / 1000,
    machine: machine(),
    authorizer: parts.filter((part): part is AuthorizerResult => part.part === 'authorizer'),
    login: parts.filter((part): part is LoginResult => part.part === 'login'),
    compare: only<CompareResult>(parts, 'compare'),
    grant: only<GrantResult>(parts, 'grant'),
    platform: only<PlatformResult>(parts, 'platform'),
    roundTrips,
    bundles,
    floors,
    coldStart: only<ColdStartResult>(parts, 'cold-start'),
    load: only<LoadResult>(parts, 'load'),
    bulkImport: only<ImportBenchResult>(parts, 'import'),
  };
  const report = renderReport(results);
  const out = args.out === undefined ? (args.quick ? undefined : REPORT) : resolve(args.out);
  if (out === undefined) {
    process.stdout.write(report);
    return;
  }
  // Atomically: a reader never sees half a report. The chart goes beside it, as it links it.
  const chart = join(dirname(out), CHART_FILE);
  for (const [file, text] of [
    [chart, renderChart(results)],
    [out, report],
  ] as const) {
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, text);
    await rename(temporary, file);
  }
  log(`wrote ${out} and ${chart} in ${results.seconds.toFixed(0)} s`);
}

if (args.part !== undefined) {
  if (args.endpoint === undefined) throw new Error('--part needs --endpoint (the embedded DynamoDB)');
  const result = await runPart(args.part, args.endpoint);
  process.stdout.write(`${RESULT_MARKER}${JSON.stringify(result)}\n`);
  // Key reload timers and keep-alive sockets of the handlers' clients would keep it running.
  process.exit(0);
} else {
  await main();
}
