/**
 * The fault matrix's bench: call sites named from the requests a run sends, a fault planted
 * at one of them, which (site, fault) pairs a run covers, and the report in docs/FAULTS.md.
 * The operations and their invariants are in tests/integration/faults/.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import type { DynamoRequest, Verdict } from '../../dev/local/dynamodb-proxy.ts';
import type { DynamoKind } from './dynamo.ts';

/** Each fault, planted at one call site; from there on the dependency behaves as named. */
const FAULT_KINDS = ['error', 'throttle', 'hang', 'lost', 'lost-retried'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const FAULT_TITLES: Record<FaultKind, string> = {
  error: '500',
  throttle: 'throttled',
  hang: 'hangs',
  lost: 'applied, answer lost',
  'lost-retried': 'applied, answer lost, retry answered',
};

/** Whether the dependency stays down until the operation has answered. */
export const staysDown = (kind: FaultKind) => kind !== 'lost-retried';

/**
 * How much of the matrix a run takes: `full`, every site with every fault (and FAULTS.md
 * rewritten); `sample` (npm run test:long), every site once and every fault at least once per
 * operation; unset (npm test), no fault: each operation runs once to name its call sites, and
 * they must be those docs/FAULTS.md lists, so a call site added or gone fails at once.
 */
const MATRIX = process.env.FAULT_MATRIX ?? 'sites';
if (!['full', 'sample', 'sites'].includes(MATRIX)) throw new Error(`FAULT_MATRIX=${MATRIX}: full or sample`);
const FULL_MATRIX = MATRIX === 'full';

/** The DynamoDB behind the proxy: dynalite, or DynamoDB Local with FAULT_DYNAMO=dynamodb-local. */
export const FAULT_DYNAMO: DynamoKind =
  process.env.FAULT_DYNAMO === 'dynamodb-local' ? 'dynamodb-local' : 'dynalite';

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;

/**
 * What an item's key says about it: the prefix of each key value (`USER`, `CUSTOMER#MEMBER`), or
 * the key's name; a name's known source's own counter (`USER#<name>#<tag>`) is `USER#source`.
 */
function keyKind(key: Item | undefined): string {
  if (key === undefined) return '';
  const parts = Object.entries(key)
    .filter(([name]) => ['pk', 'sk', 'counterKey', 'sessionId', 'parcelNumber'].includes(name))
    .map(([name, value]) => {
      const text = typeof value.S === 'string' ? value.S : '';
      const [prefix = name, ...rest] = text.split('#');
      if (rest.length === 0) return name;
      return name === 'counterKey' && rest.length === 2 ? `${prefix}#source` : prefix;
    });
  return parts.join('/');
}

/** The items one request touches, as `table:kind`. */
function touched(request: DynamoRequest, roleOf: (table: string) => string): string[] {
  const { body } = request;
  const item = (table: unknown, key: unknown) =>
    `${roleOf(String(table))}:${keyKind(key as Item | undefined)}`;
  if (Array.isArray(body.TransactItems)) {
    return (body.TransactItems as Record<string, Record<string, unknown>>[]).map((entry) => {
      const [action, inner = {}] = Object.entries(entry)[0] ?? ['', {}];
      return `${action}(${item(inner.TableName, inner.Key ?? inner.Item)})`;
    });
  }
  if (typeof body.RequestItems === 'object' && body.RequestItems !== null) {
    return Object.keys(body.RequestItems).map((table) => roleOf(table));
  }
  if (request.action === 'Query' || request.action === 'Scan') return [roleOf(String(body.TableName))];
  return [item(body.TableName, body.Key ?? body.Item)];
}

/**
 * Names the call sites of one run in the order their requests arrive: `UpdateItem
 * loginThrottle:USER`, a second request of the same name `… #2`. Requests sent together
 * (Promise.all) may arrive in either order; their names do not depend on it.
 */
function siteNamer(tables: Readonly<Record<string, string>>) {
  const roles = new Map(Object.entries(tables).map(([role, name]) => [name, role]));
  const roleOf = (table: string) => roles.get(table) ?? table;
  const seen = new Map<string, number>();
  return (request: DynamoRequest) => {
    const base = `${request.action} ${touched(request, roleOf).join(' ')}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base} #${count}`;
  };
}

/**
 * One run's plan: every request named; the first request named `site` gets the fault, and
 * every later one (the SDK's retries included) gets what the dependency does from then on.
 * With `site` undefined nothing is planted: the run names its sites (`sites`).
 */
export function faultPlan(tables: Readonly<Record<string, string>>, site?: string, kind?: FaultKind) {
  const name = siteNamer(tables);
  const sites: string[] = [];
  let planted = false;
  const verdict = (request: DynamoRequest): Verdict => {
    const named = name(request);
    if (planted) {
      if (kind === 'lost-retried') return 'forward';
      return kind === 'lost' ? 'hang' : (kind ?? 'forward');
    }
    sites.push(named);
    if (named !== site || kind === undefined) return 'forward';
    planted = true;
    return kind === 'lost' || kind === 'lost-retried' ? 'lose-answer' : kind;
  };
  return {
    verdict,
    /** The sites this run's requests reached before the fault, in arrival order. */
    sites,
    /** Whether the fault's site was reached. */
    get planted() {
      return planted;
    },
  };
}

/**
 * The runs of one operation: in the full matrix every site with every fault; in the sample
 * every site once and every fault at least once, rotated by `offset` so operations differ.
 */
function runsOf(
  sites: readonly string[],
  offset: number,
  kinds: readonly FaultKind[] = FAULT_KINDS,
): [string, FaultKind][] {
  if (FULL_MATRIX) return sites.flatMap((site) => kinds.map((kind): [string, FaultKind] => [site, kind]));
  const runs = sites.map((site, index): [string, FaultKind] => [
    site,
    kinds[(index + offset) % kinds.length] as FaultKind,
  ]);
  for (let extra = sites.length; extra < kinds.length; extra++) {
    runs.push([sites[extra % sites.length] as string, kinds[(extra + offset) % kinds.length] as FaultKind]);
  }
  return runs;
}

/** One operation's row of the report. */
interface MatrixRow {
  readonly operation: string;
  readonly site: string;
  /** Runs per fault, broken or not. */
  readonly runs: Partial<Record<FaultKind, number>>;
}

/** A run that broke an invariant, and the first line of what broke. */
interface BrokenRun {
  readonly operation: string;
  readonly site: string;
  readonly kind: FaultKind;
  readonly invariant: string;
}

const REPORT = resolve(import.meta.dirname, '../../docs/FAULTS.md');
const begin = (section: string) => `<!-- fault matrix: ${section} -->`;
const end = (section: string) => `<!-- end of fault matrix: ${section} -->`;

/**
 * The section's table as docs/FAULTS.md shows it: one row per operation, its call sites in the
 * order a run reaches them, and runs only where they are not one of each fault.
 */
function matrixTable(rows: readonly MatrixRow[], broken: readonly BrokenRun[]): string {
  // What a site ran where it was not one run of each fault (in the full matrix, the faults its
  // operation leaves out): `not run with throttled or hangs`.
  const unusualRuns = (runs: MatrixRow['runs']) => {
    const missing = FAULT_KINDS.filter((kind) => (runs[kind] ?? 0) === 0).map((kind) => FAULT_TITLES[kind]);
    const repeated = FAULT_KINDS.filter((kind) => (runs[kind] ?? 0) > 1).map(
      (kind) => `${FAULT_TITLES[kind]} ${runs[kind]} runs`,
    );
    return [...(missing.length > 0 ? [`not run with ${missing.join(' or ')}`] : []), ...repeated].join('; ');
  };
  const groups: MatrixRow[][] = [];
  for (const row of rows) {
    const last = groups.at(-1);
    if (last?.[0]?.operation === row.operation) last.push(row);
    else groups.push([row]);
  }
  const lines = groups.map((group) => {
    const notes = group.map((row) => unusualRuns(row.runs));
    const shared = notes.every((note) => note === notes[0]) ? (notes[0] ?? '') : undefined;
    const sites = group
      .map((row, index) => {
        const note = shared === undefined ? notes[index] : '';
        return note === '' || note === undefined ? `\`${row.site}\`` : `\`${row.site}\` (${note})`;
      })
      .join(', ');
    return `| ${group[0]?.operation} | ${sites}${shared ? `; each ${shared}` : ''} |`;
  });
  const total = rows.reduce((sum, row) => sum + Object.values(row.runs).reduce((a, b) => a + b, 0), 0);
  const operations = new Set(rows.map((row) => row.operation)).size;
  return [
    `${operations} operations, ${rows.length} call sites, ${total} runs on ${FAULT_DYNAMO}, ` +
      `${broken.length} invariants broken. Each call site ran once with each fault but where noted.`,
    '',
    '| operation | call sites |',
    '|---|---|',
    ...lines,
    ...(broken.length === 0
      ? []
      : [
          '',
          'Broken:',
          '',
          ...broken.map(
            (run) => `- ${run.operation}, ${FAULT_TITLES[run.kind]} at \`${run.site}\`: ${run.invariant}`,
          ),
        ]),
  ].join('\n');
}

/** Writes the section's table into docs/FAULTS.md, between its markers. */
async function writeMatrixSection(
  section: string,
  rows: readonly MatrixRow[],
  broken: readonly BrokenRun[],
): Promise<void> {
  const text = await readFile(REPORT, 'utf8');
  const from = text.indexOf(begin(section));
  const to = text.indexOf(end(section));
  if (from < 0 || to < from) throw new Error(`docs/FAULTS.md has no section ${section}`);
  const written = `${text.slice(0, from + begin(section).length)}\n${matrixTable(rows, broken)}\n${text.slice(to)}`;
  await writeFile(REPORT, written);
}

/** The (operation, call site) pairs the section of docs/FAULTS.md lists, in its order. */
async function reportedSites(section: string): Promise<string[]> {
  const text = await readFile(REPORT, 'utf8');
  const from = text.indexOf(begin(section));
  const to = text.indexOf(end(section));
  if (from < 0 || to < from) return [];
  return [...text.slice(from, to).matchAll(/^\| ([^|]+) \| (.+) \|$/gm)].flatMap(([, operation, sites]) =>
    [...(sites ?? '').matchAll(/`([^`]+)`/g)].map(([, site]) => `${operation?.trim()}: ${site}`),
  );
}

/**
 * Registers a matrix's tests: one that names each operation's call sites (and, in the
 * sample, holds docs/FAULTS.md to them), one per operation running its (site, fault) pairs,
 * and with the full matrix one that writes the section. `run` does one run and returns the
 * sites it reached: with no site given, every site of a fault-free run.
 */
export function describeMatrix<O extends { readonly name: string; readonly kinds?: readonly FaultKind[] }>(
  section: string,
  operations: readonly O[],
  run: (operation: O, site?: string, kind?: FaultKind) => Promise<string[]>,
) {
  const sitesOf = new Map<string, readonly string[]>();
  const rows: MatrixRow[] = [];
  const broken: BrokenRun[] = [];

  // One fault-free run of every operation in turn: the API's 37 took 30 s once on a busy
  // machine, so the time grows with the operations (two seconds each, as many as there are).
  it(
    'names the call sites of every operation, as docs/FAULTS.md lists them',
    async () => {
      for (const operation of operations) sitesOf.set(operation.name, await run(operation));
      const named = [...sitesOf].flatMap(([operation, sites]) =>
        sites.map((site) => `${operation}: ${site}`),
      );
      if (!FULL_MATRIX) {
        expect(
          await reportedSites(section),
          'docs/FAULTS.md is out of date: run FAULT_MATRIX=full npm run test:long',
        ).toEqual(named);
      }
    },
    Math.max(30_000, 2_000 * operations.length),
  );

  if (MATRIX === 'sites') return;
  operations.forEach((operation, index) => {
    it(`${operation.name}: every call site, each fault, then a retry`, async () => {
      const sites = sitesOf.get(operation.name) ?? [];
      expect(sites.length, 'call sites named').toBeGreaterThan(0);
      // Every run is made, broken or not: the failure names each (site, fault) that broke one.
      const failed: Error[] = [];
      for (const [site, kind] of runsOf(sites, index, operation.kinds)) {
        try {
          await run(operation, site, kind);
        } catch (error) {
          const named = error instanceof Error ? error : new Error(String(error));
          broken.push({
            operation: operation.name,
            site,
            kind,
            invariant: (named.message.split('\n')[0] ?? '').replace(/ \/\/ Object\.is equality$/, ''),
          });
          named.message = `${operation.name}, ${kind} at ${site}: ${named.message}`;
          failed.push(named);
        }
        const row = rows.find(
          (candidate) => candidate.operation === operation.name && candidate.site === site,
        );
        if (row === undefined) rows.push({ operation: operation.name, site, runs: { [kind]: 1 } });
        else (row.runs as Record<string, number>)[kind] = (row.runs[kind] ?? 0) + 1;
      }
      const [first, ...more] = failed;
      if (first !== undefined) {
        if (more.length > 0)
          first.message += `\nand ${more.length} more:\n${more.map(({ message }) => message.split('\n')[0]).join('\n')}`;
        throw first;
      }
    }, 900_000);
  });

  if (FULL_MATRIX) {
    it('writes the matrix into docs/FAULTS.md, every run passing', async () => {
      const ordered = [...sitesOf].flatMap(([operation, sites]) =>
        sites.map(
          (site) =>
            rows.find((row) => row.operation === operation && row.site === site) ?? {
              operation,
              site,
              runs: {},
            },
        ),
      );
      // Written either way, so the page shows the last full run; broken, it fails the suite.
      await writeMatrixSection(section, ordered, broken);
      expect(broken, 'runs that broke an invariant').toEqual([]);
    });
  }
}
