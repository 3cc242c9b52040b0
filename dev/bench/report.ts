/** docs/PERFORMANCE.md: the tables, the targets of targets.json as pass/fail, the machine, how to reproduce. */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { type FloorRow, floorChart } from './chart.ts';
import type { Sample } from './measure.ts';
import {
  type AuthorizerResult,
  type Bundle,
  CLIENT_PER_STORE,
  type ColdStartResult,
  type CompareResult,
  type FloorBundle,
  type GrantResult,
  type ImportBenchResult,
  type LoadResult,
  type LoginResult,
  type RoundTripsResult,
} from './results.ts';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly commit: string;
}

export interface BenchResults {
  readonly date: Date;
  readonly quick: boolean;
  readonly seconds: number;
  readonly machine: Machine;
  readonly authorizer: readonly AuthorizerResult[];
  readonly login: readonly LoginResult[];
  readonly compare: CompareResult;
  readonly grant: GrantResult;
  readonly roundTrips: RoundTripsResult;
  readonly bundles: readonly Bundle[];
  readonly floors: readonly FloorBundle[];
  readonly coldStart: ColdStartResult;
  readonly load: LoadResult;
  readonly bulkImport: ImportBenchResult;
}

const Format = v.picklist(['exactTimes', 'times', 'ms', 'kib', 'count', 'steps']);

/** targets.json: the targets (`metric` names a value `measured` gives) and the traded targets. */
const TargetsFile = v.object({
  targets: v.array(
    v.object({
      metric: v.string(),
      name: v.string(),
      limit: v.number(),
      at: v.picklist(['most', 'least']),
      format: Format,
    }),
  ),
  /** Targets first set in the issues that the design gave up on purpose: shown, never a FAIL. */
  traded: v.array(
    v.object({
      metric: v.string(),
      format: Format,
      target: v.string(),
      tradedFor: v.string(),
      nowMeasured: v.string(),
    }),
  ),
});
type TargetSpec = v.InferOutput<typeof TargetsFile>['targets'][number];

const TARGETS = v.parse(
  TargetsFile,
  JSON.parse(readFileSync(new URL('./targets.json', import.meta.url), 'utf8')),
);

interface Target {
  readonly name: string;
  readonly measured: string;
  readonly limit: string;
  readonly pass: boolean | undefined;
}

const us = (value: number) => `${value.toFixed(1)} µs`;
const ms = (value: number) => `${(value / 1000).toFixed(2)} ms`;
/** µs below a millisecond, ms above: the grant's parts span three orders of magnitude. */
const duration = (value: number) => (Math.abs(value) < 1000 ? us(value) : ms(value));
const times = (value: number) => `${value.toFixed(2)}×`;
/** Three decimals where a verdict hangs on it: 1.104× must not read as a failing 1.10×. */
const exactTimes = (value: number) => `${value.toFixed(3)}×`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const verdict = (pass: boolean | undefined) => (pass === undefined ? 'n/a' : pass ? 'pass' : '**FAIL**');
const spread = (sample: Sample, unit: (value: number) => string) =>
  `${unit(sample.p25Us)} – ${unit(sample.p75Us)}`;
const plan = (sample: Sample) => `${sample.rounds} × ${sample.callsPerRound}`;

const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

const AUTHORIZER_LABEL: Record<string, string> = {
  '30s': 'revocation cache 30s (production: state read once per user per 30 s)',
  '0s': 'revocation cache 0s (every call reads the user with one GetItem)',
};

/** The file the chart is written to, beside the report; the report links it by this name. */
export const CHART_FILE = 'performance-floors.svg';

/** The authorizer floor the design can reach: AWS stages read the key set from SSM. */
const REACHABLE_FLOOR = 'floor: jose + GetItem + SSM';
const BARE_FLOOR = 'floor: jose + GetItem';

/** A target's limit from targets.json, by its metric: the chart draws the same line. */
const limitOf = (metric: string) =>
  TARGETS.targets.find((spec) => spec.metric === metric)?.limit ?? Number.NaN;

/** A cold-start variant's time beyond its function's empty handler. */
function beyondEmpty(result: ColdStartResult, fn: string, variant: string): number | undefined {
  const found = result.functions.find((candidate) => candidate.function === fn);
  const sample = found?.variants[variant];
  const empty = found?.variants.empty;
  return sample === undefined || empty === undefined ? undefined : sample.totalMs - empty.totalMs;
}

/** Per function, its time against its floor: the targets' ratios and the chart's rows. */
export function floorRows(results: BenchResults): FloorRow[] {
  const rows: FloorRow[] = [];
  const cached = results.authorizer.find((result) => result.revocationCacheTtl === '30s');
  if (cached !== undefined) {
    rows.push({
      label: 'authorizer, warm',
      what: 'revocation cache 30s, per call',
      floorLabel: 'jose jwtVerify + its EMF line',
      value: cached.samples.handler.medianUs,
      floor: cached.samples.joseMetrics.medianUs,
      format: us,
      limit: limitOf('authorizerWarm'),
    });
  }
  const cold = beyondEmpty(results.coldStart, 'authorizer', 'bundled');
  const coldFloor = beyondEmpty(results.coldStart, 'authorizer', REACHABLE_FLOOR);
  if (cold !== undefined && coldFloor !== undefined) {
    rows.push({
      label: 'authorizer, cold start',
      what: 'import + first call, beyond an empty handler',
      floorLabel: 'jose + GetItem + SSM',
      value: cold,
      floor: coldFloor,
      format: plainMs,
      limit: limitOf('authorizerCold'),
    });
  }
  for (const cost of [10, 4]) {
    const result = results.login.find((candidate) => candidate.cost === cost);
    if (result === undefined) continue;
    const { floor } = result.samples;
    for (const [label, sample] of [
      ['login', result.samples.login],
      ['login-extended', result.samples.loginExtended],
    ] as const) {
      rows.push({
        label: `${label}, warm, cost ${cost}`,
        what: 'per call',
        floorLabel: 'bcrypt + two DynamoDB steps',
        value: sample.medianUs,
        floor: floor.medianUs,
        format: ms,
        limit:
          cost === 10
            ? limitOf('loginRatio10')
            : (floor.medianUs + limitOf('loginOwnWork4')) / floor.medianUs,
        ...(cost !== 10 && { limitLabel: `floor + ${ms(limitOf('loginOwnWork4'))}` }),
      });
    }
    if (cost === 10) {
      rows.push({
        label: `login from a known source, warm, cost ${cost}`,
        what: 'per call, the name locked by strangers',
        floorLabel: 'bcrypt + the known-source path’s requests',
        value: result.samples.knownSourceLogin.medianUs,
        floor: result.samples.knownSourceFloor.medianUs,
        format: ms,
        limit: limitOf('knownSourceLoginRatio10'),
      });
    }
  }
  const {
    grant,
    floor: grantFloor,
    introspect,
    introspectFloor,
    knownSourceGrant,
    knownSourceFloor,
    lastUseGrant,
    lastUseFloor,
  } = results.grant.samples;
  rows.push({
    label: 'client credentials grant, warm',
    what: 'per call',
    floorLabel: 'SHA-256 + sign + two DynamoDB steps',
    value: grant.medianUs,
    floor: grantFloor.medianUs,
    format: duration,
    limit: limitOf('grantRatio'),
  });
  rows.push({
    label: 'grant from a known source, warm',
    what: 'per call, the client locked by strangers',
    floorLabel: 'SHA-256 + sign + the known-source path’s requests',
    value: knownSourceGrant.medianUs,
    floor: knownSourceFloor.medianUs,
    format: duration,
    limit: limitOf('knownSourceGrantRatio'),
  });
  rows.push({
    label: 'grant, first of the hour, warm',
    what: 'per call, its secret’s last use due and written',
    floorLabel: 'SHA-256 + sign ∥ UpdateItem + two DynamoDB steps',
    value: lastUseGrant.medianUs,
    floor: lastUseFloor.medianUs,
    format: duration,
    limit: limitOf('lastUseGrantRatio'),
  });
  rows.push({
    label: 'token introspection, warm',
    what: 'per call, an active client token',
    floorLabel: 'SHA-256 + jwtVerify + two DynamoDB steps',
    value: introspect.medianUs,
    floor: introspectFloor.medianUs,
    format: duration,
    limit: limitOf('introspectionRatio'),
  });
  const bulk = results.bulkImport;
  rows.push({
    label: `admin import, ${bulk.users} users`,
    what: 'whole file',
    floorLabel: 'bare BatchWriteItem loop',
    value: bulk.importSeconds,
    floor: bulk.bareSeconds,
    format: (seconds) => `${seconds.toFixed(1)} s`,
    limit: 1 / limitOf('importThroughput'),
  });
  return rows;
}

/** The named values targets.json's targets and traded targets point at, measured in this run. */
function measured(results: BenchResults): Map<string, number> {
  const values = new Map<string, number>();
  const set = (name: string, value: number | undefined) => {
    if (value !== undefined && Number.isFinite(value)) values.set(name, value);
  };
  const cached = results.authorizer.find((result) => result.revocationCacheTtl === '30s');
  if (cached !== undefined) {
    const { handler, jose, joseMetrics } = cached.samples;
    set('authorizerWarm', handler.medianUs / joseMetrics.medianUs);
    set('authorizerOverJose', handler.medianUs / jose.medianUs);
    set('emfLineUs', joseMetrics.medianUs - jose.medianUs);
  }
  const authorizerBundle = results.bundles.find((bundle) => bundle.function === 'authorizer');
  const reachableFloor = results.floors.find((floor) => floor.floor === REACHABLE_FLOOR);
  if (authorizerBundle !== undefined) {
    set('authorizerZipBytes', authorizerBundle.zipBytes);
    if (reachableFloor !== undefined)
      set('authorizerBundle', authorizerBundle.gzipBytes / reachableFloor.gzipBytes);
  }
  const cold = beyondEmpty(results.coldStart, 'authorizer', 'bundled');
  const coldFloor = beyondEmpty(results.coldStart, 'authorizer', REACHABLE_FLOOR);
  if (cold !== undefined && coldFloor !== undefined) set('authorizerCold', cold / coldFloor);
  const authorizerVariants = results.coldStart.functions.find((fn) => fn.function === 'authorizer')?.variants;
  const runtimeSdk = authorizerVariants?.['bundled, SDK from the runtime'];
  if (runtimeSdk !== undefined && authorizerVariants?.bundled !== undefined)
    set('runtimeSdkImportMs', runtimeSdk.importMs - authorizerVariants.bundled.importMs);
  for (const { cost, samples } of results.login) {
    const { login, loginExtended, compare, floor, knownSourceLogin, knownSourceFloor } = samples;
    if (cost === 10) {
      set('loginRatio10', login.medianUs / floor.medianUs);
      set('loginExtendedRatio10', loginExtended.medianUs / floor.medianUs);
      set('loginOverCompare10', login.medianUs / compare.medianUs);
      set('knownSourceLoginRatio10', knownSourceLogin.medianUs / knownSourceFloor.medianUs);
      set('knownSourceLoginOverLogin10', knownSourceLogin.medianUs / login.medianUs);
    }
    if (cost === 4) {
      set('loginOwnWork4', login.medianUs - floor.medianUs);
      set('loginExtendedOwnWork4', loginExtended.medianUs - floor.medianUs);
      set('loginOverheadBeyondCompare4', login.medianUs - compare.medianUs);
    }
  }
  const { grant, secretCheck, getItem, sign, floor: grantFloor } = results.grant.samples;
  set('grantRatio', grant.medianUs / grantFloor.medianUs);
  const { knownSourceGrant, knownSourceFloor } = results.grant.samples;
  set('knownSourceGrantRatio', knownSourceGrant.medianUs / knownSourceFloor.medianUs);
  set('knownSourceGrantOverGrant', knownSourceGrant.medianUs / grant.medianUs);
  const { lastUseGrant, lastUseFloor } = results.grant.samples;
  set('lastUseGrantRatio', lastUseGrant.medianUs / lastUseFloor.medianUs);
  set(
    'introspectionRatio',
    results.grant.samples.introspect.medianUs / results.grant.samples.introspectFloor.medianUs,
  );
  set('grantOverBareWork', grant.medianUs / (secretCheck.medianUs + getItem.medianUs + sign.medianUs));
  set(
    'loginExtendedSteps',
    results.roundTrips.operations.find((op) => op.operation === 'login-extended')?.sequential,
  );
  for (const fn of results.coldStart.functions) {
    const { bundled, unbundled } = fn.variants;
    if (bundled !== undefined && unbundled !== undefined)
      set(`bundledImport:${fn.function}`, bundled.importMs / unbundled.importMs);
  }
  set(
    'loadErrors',
    results.load.routes.reduce((sum, route) => sum + route.errors, 0),
  );
  set('importThroughput', results.bulkImport.ratio);
  set('users', results.bulkImport.users);
  return values;
}

const FORMATS: Record<TargetSpec['format'], (value: number) => string> = {
  exactTimes,
  times,
  ms,
  kib,
  count: (value) => String(value),
  steps: (value) => `${value} sequential steps`,
};

/** The limit as the table states it: a limit in µs in ms, a ratio with two decimals. */
function limitText(spec: TargetSpec): string {
  const sign = spec.at === 'most' ? '≤' : '≥';
  if (spec.format === 'ms') return `${sign} ${ms(spec.limit)}`;
  if (spec.format === 'count') return String(spec.limit);
  return `${sign} ${spec.limit.toFixed(2)}×`;
}

/** `{name}` in a text: the measured value of that name, formatted; `{runtimeSdk}`: a clause. */
function fill(text: string, values: Map<string, number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    if (name === 'emfLineUs') return us(values.get(name) ?? Number.NaN);
    if (name === 'users') return String(values.get(name) ?? '');
    if (name === 'runtimeSdk') {
      const delta = values.get('runtimeSdkImportMs');
      return delta === undefined
        ? ''
        : `; leaving the SDK to the runtime imports ${plainMs(Math.abs(delta))} ${delta >= 0 ? 'slower' : 'faster'} (section 5)`;
    }
    return whole;
  });
}

function targets(results: BenchResults): Target[] {
  const values = measured(results);
  return TARGETS.targets.flatMap((spec) => {
    const prefix = `${spec.metric}:`;
    const found: [string, number][] = values.has(spec.metric)
      ? [[fill(spec.name, values), values.get(spec.metric) ?? 0]]
      : [...values]
          .filter(([name]) => name.startsWith(prefix))
          .map(([name, value]) => [spec.name.replace('{function}', name.slice(prefix.length)), value]);
    return found.map(([name, value]) => ({
      name,
      measured: FORMATS[spec.format](value),
      limit: limitText(spec),
      pass: spec.at === 'most' ? value <= spec.limit : value >= spec.limit,
    }));
  });
}

function tradedSection(results: BenchResults): string {
  const values = measured(results);
  const rows = TARGETS.traded.flatMap((spec) => {
    const value = values.get(spec.metric);
    return value === undefined
      ? []
      : [[spec.target, FORMATS[spec.format](value), fill(spec.tradedFor, values), spec.nowMeasured]];
  });
  return [
    '## Traded',
    '',
    'Targets first set in the issues and given up on purpose. Measured in this run so the trade stays',
    'visible, and never a FAIL: each now has a target against a floor the design can reach. Why:',
    '[performance-design.md](performance-design.md).',
    '',
    table(['Target as first set', 'Measured', 'Traded for', 'Now measured as'], rows),
    '',
  ].join('\n');
}

/** Lambda's Init is the module's import; the first invoke pays what the function does lazily. */
function coldInitSection(results: BenchResults): string {
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

function authorizerSection(results: readonly AuthorizerResult[]): string {
  const parts = results.map((result) => {
    const { handler, jose, joseMetrics, floor } = result.samples;
    const rows = [
      ['Real handler, REQUEST event', us(handler.medianUs), spread(handler, us), plan(handler)],
      ['Bare jose `jwtVerify` (same token, key, options)', us(jose.medianUs), spread(jose, us), plan(jose)],
      [
        'Bare jose `jwtVerify` + the EMF line of an allowed call (Powertools, same stdout)',
        us(joseMetrics.medianUs),
        spread(joseMetrics, us),
        plan(joseMetrics),
      ],
      ['Floor: bare node:crypto Ed25519 verify', us(floor.medianUs), spread(floor, us), plan(floor)],
    ];
    const ratios = [
      ['Handler ÷ (jose + EMF line)', times(handler.medianUs / joseMetrics.medianUs)],
      ['Handler ÷ jose', times(handler.medianUs / jose.medianUs)],
      ['Handler ÷ floor', times(handler.medianUs / floor.medianUs)],
      ['jose ÷ floor', times(jose.medianUs / floor.medianUs)],
    ];
    return [
      `### ${AUTHORIZER_LABEL[result.revocationCacheTtl] ?? `revocation cache ${result.revocationCacheTtl}`}`,
      '',
      table(['Variant', 'Median per call', 'Round means p25 – p75', 'Rounds × calls'], rows),
      '',
      table(['Ratio of medians', 'Value'], ratios),
    ].join('\n');
  });
  return ['## 1. Authorizer, warm', '', ...parts.flatMap((part) => [part, ''])].join('\n');
}

/** `requests`: DynamoDB requests per login (section 3), to take their floor out of the overhead. */
function loginSection(results: readonly LoginResult[], requests: number | undefined): string {
  const parts = results.map((result) => {
    const { login, loginExtended, compare, getItem, floor, knownSourceLogin, knownSourceFloor } =
      result.samples;
    const rows = [
      ['Login handler', ms(login.medianUs), spread(login, ms), plan(login)],
      ['Login-extended handler', ms(loginExtended.medianUs), spread(loginExtended, ms), plan(loginExtended)],
      [
        'bcryptjs `compare` alone (same password and hash)',
        ms(compare.medianUs),
        spread(compare, ms),
        plan(compare),
      ],
      [
        'One DynamoDB GetItem on loopback (same client settings)',
        ms(getItem.medianUs),
        spread(getItem, ms),
        plan(getItem),
      ],
      [
        'Floor: the compare between the two DynamoDB steps, made bare',
        ms(floor.medianUs),
        spread(floor, ms),
        plan(floor),
      ],
      [
        'Login handler from a known source, the name locked by strangers',
        ms(knownSourceLogin.medianUs),
        spread(knownSourceLogin, ms),
        plan(knownSourceLogin),
      ],
      [
        'Known-source floor: the compare between the known-source path’s requests, made bare',
        ms(knownSourceFloor.medianUs),
        spread(knownSourceFloor, ms),
        plan(knownSourceFloor),
      ],
    ];
    const derived = [
      ['Login ÷ floor', times(login.medianUs / floor.medianUs)],
      ['Login-extended ÷ floor', times(loginExtended.medianUs / floor.medianUs)],
      ['Login − floor (own work)', ms(login.medianUs - floor.medianUs)],
      ['Login-extended − floor (own work)', ms(loginExtended.medianUs - floor.medianUs)],
      ['Login ÷ compare', times(login.medianUs / compare.medianUs)],
      ['Login-extended ÷ compare', times(loginExtended.medianUs / compare.medianUs)],
      ['Login − compare (overhead)', ms(login.medianUs - compare.medianUs)],
      ['Login-extended − compare (overhead)', ms(loginExtended.medianUs - compare.medianUs)],
      ...(requests === undefined
        ? []
        : [
            [
              `Login − compare − ${requests} × GetItem (own work beyond bcrypt and DynamoDB)`,
              ms(login.medianUs - compare.medianUs - requests * getItem.medianUs),
            ],
          ]),
      ['Known-source login ÷ floor', times(knownSourceLogin.medianUs / floor.medianUs)],
      ['Known-source login ÷ its floor', times(knownSourceLogin.medianUs / knownSourceFloor.medianUs)],
      [
        'Known-source login − its floor (own work)',
        ms(knownSourceLogin.medianUs - knownSourceFloor.medianUs),
      ],
      ['Known-source login ÷ login', times(knownSourceLogin.medianUs / login.medianUs)],
      ['Known-source login − login (the known-source path)', ms(knownSourceLogin.medianUs - login.medianUs)],
    ];
    return [
      `### bcrypt cost ${result.cost}${result.cost === 10 ? ' (production)' : ''}`,
      '',
      table(['Variant', 'Median per call', 'Round means p25 – p75', 'Rounds × calls'], rows),
      '',
      table(['Derived from the medians', 'Value'], derived),
    ].join('\n');
  });
  return [
    '## 2. Login and login-extended, warm (embedded DynamoDB on loopback)',
    '',
    'Each against the same work made bare, and a login from a source the name knows while strangers',
    'have locked the name, beside the login and against its own floor:',
    '[the known-source path](performance-design.md#the-known-source-path).',
    '',
    ...parts.flatMap((part) => [part, '']),
  ].join('\n');
}

function grantSection(result: GrantResult): string {
  const {
    grant,
    secretCheck,
    getItem,
    sign,
    floor,
    introspect,
    verify,
    introspectFloor,
    knownSourceGrant,
    knownSourceFloor,
    lastUseGrant,
    lastUseFloor,
  } = result.samples;
  const row = (variant: string, sample: Sample) => [
    variant,
    duration(sample.medianUs),
    spread(sample, duration),
    plan(sample),
  ];
  const bare = secretCheck.medianUs + getItem.medianUs + sign.medianUs;
  const derived = [
    ['Grant ÷ floor', times(grant.medianUs / floor.medianUs)],
    ['Grant − floor (own work)', ms(grant.medianUs - floor.medianUs)],
    ['Grant ÷ (secret check + one GetItem + sign)', times(grant.medianUs / bare)],
    // The counters' requests are conditional writes, dearer on the embedded DynamoDB than a read.
    [
      "Floor − (secret check + one GetItem + sign): the throttle's four UpdateItems",
      ms(floor.medianUs - bare),
    ],
    ['Introspection ÷ its floor', times(introspect.medianUs / introspectFloor.medianUs)],
    ['Introspection − its floor (own work)', ms(introspect.medianUs - introspectFloor.medianUs)],
    ['Known-source grant ÷ floor', times(knownSourceGrant.medianUs / floor.medianUs)],
    ['Known-source grant ÷ its floor', times(knownSourceGrant.medianUs / knownSourceFloor.medianUs)],
    ['Known-source grant − its floor (own work)', ms(knownSourceGrant.medianUs - knownSourceFloor.medianUs)],
    ['Known-source grant ÷ grant', times(knownSourceGrant.medianUs / grant.medianUs)],
    ['Known-source grant − grant (the known-source path)', ms(knownSourceGrant.medianUs - grant.medianUs)],
    ['First grant of the hour ÷ its floor', times(lastUseGrant.medianUs / lastUseFloor.medianUs)],
    ['First grant of the hour − its floor (own work)', ms(lastUseGrant.medianUs - lastUseFloor.medianUs)],
    ['First grant of the hour ÷ grant', times(lastUseGrant.medianUs / grant.medianUs)],
    ['First grant of the hour − grant (the last-use write)', ms(lastUseGrant.medianUs - grant.medianUs)],
  ];
  return [
    '## 9. Client credentials grant and token introspection, warm (embedded DynamoDB on loopback)',
    '',
    '`POST /api/v1/oauth/token` with the client’s id and secret by HTTP Basic, and',
    '`POST /api/v1/oauth/introspect` of the token it issued (active, its client’s state in the',
    'revocation cache), each against the same work made bare:',
    '[how it is measured](performance-design.md#the-client-credentials-grant). Beside them, the grant',
    'from a source the client knows while strangers have locked the client, against its own floor:',
    '[the known-source path](performance-design.md#the-known-source-path); and the first grant of',
    'a secret’s hour, which writes the secret’s [last use](clients.md#last-use) beside the sign,',
    'against the floor with that write beside its sign.',
    '',
    table(
      ['Variant', 'Median per call', 'Round means p25 – p75', 'Rounds × calls'],
      [
        row('Token handler, client credentials grant (form body, HTTP Basic)', grant),
        row('Secret check alone: SHA-256 and `timingSafeEqual` with two stored digests', secretCheck),
        row('One consistent GetItem of the client on loopback (same client settings)', getItem),
        row('One jose sign of the same token (same key)', sign),
        row('Floor: the secret check between the grant’s two DynamoDB steps made bare, then the sign', floor),
        row('Introspection handler, the grant’s token (form body, HTTP Basic)', introspect),
        row('One jose jwtVerify of the token (the authorizer’s options)', verify),
        row(
          'Introspection floor: the same two DynamoDB steps and secret check, then the verify',
          introspectFloor,
        ),
        row('Token handler from a known source, the client locked by strangers', knownSourceGrant),
        row(
          'Known-source floor: the secret check between the known-source path’s requests made bare, then the sign',
          knownSourceFloor,
        ),
        row(
          'Token handler, the first grant of its secret’s hour (its last use due, and written)',
          lastUseGrant,
        ),
        row(
          'First-of-the-hour floor: the floor with the last use’s conditional UpdateItem beside the sign',
          lastUseFloor,
        ),
      ],
    ),
    '',
    table(['Derived from the medians', 'Value'], derived),
    '',
  ].join('\n');
}

/**
 * The most a compare at a stage's importBcryptMaxCost may take at its login memory: a tenth of
 * the login's 10 s timeout, which must also hold a cold start and two DynamoDB steps of up to
 * 3.5 s each in retries (lib/aws/requests.ts).
 */
const IMPORT_COMPARE_BUDGET_MS = 1000;

function compareSection(result: CompareResult): string {
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

function roundTripsSection(result: RoundTripsResult): string {
  const rows = result.operations.map((op) => [
    op.operation,
    String(op.total),
    String(op.sequential),
    Object.entries(op.byAction)
      .map(([action, n]) => `${action} × ${n}`)
      .join(', ') || '—',
    op.totals.length > 1 ? `differed between calls: ${op.totals.join(', ')}; the last shown` : '',
  ]);
  return [
    '## 3. DynamoDB round trips per operation',
    '',
    table(['Operation', 'Round trips', 'Sequential steps', 'Requests', 'Note'], rows),
    '',
  ].join('\n');
}

const plainMs = (value: number) => `${value.toFixed(1)} ms`;

function coldStartSection(result: ColdStartResult): string {
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

function loadSection(result: LoadResult): string {
  const rows = result.routes.map((route) => [
    route.route,
    String(route.connections),
    `${route.seconds.toFixed(0)} s`,
    String(route.requests),
    route.requestsPerSecond.toFixed(0),
    plainMs(route.p50Ms),
    plainMs(route.p99Ms),
    String(route.errors),
    `${plainMs(route.workMs)} (${route.workLabel})`,
    route.p50Ms > 0 ? `${((1 - route.workMs / route.p50Ms) * 100).toFixed(0)} %` : 'n/a',
  ]);
  return [
    '## 6. Local stack under load (autocannon on loopback, bounded in time)',
    '',
    table(
      [
        'Route',
        'Connections',
        'Time',
        'Requests',
        'Requests/s',
        'p50',
        'p99',
        'Errors',
        'The function’s own work (in-process)',
        'Share of p50 that is the local stack',
      ],
      rows,
    ),
    '',
  ].join('\n');
}

function importSection(result: ImportBenchResult): string {
  const rate = (count: number, seconds: number) => (seconds > 0 ? (count / seconds).toFixed(0) : 'n/a');
  return [
    '## 8. Bulk import (`npm run admin -- import`, ops/accounts/import.ts)',
    '',
    `${result.users} users of ${result.customers} customers (two pickup addresses each): ${result.records} records, ` +
      `${result.items} DynamoDB items, into empty tables, against a bare BatchWriteItem loop writing the same items: ` +
      '[how it is measured](performance-design.md#the-bulk-import).',
    '',
    table(
      ['', 'Time', 'Records/s', 'Items/s'],
      [
        [
          'Bare BatchWriteItem loop (mean of two runs)',
          `${result.bareSeconds.toFixed(1)} s`,
          rate(result.records, result.bareSeconds),
          rate(result.items, result.bareSeconds),
        ],
        [
          'Import (three passes)',
          `${result.importSeconds.toFixed(1)} s`,
          rate(result.records, result.importSeconds),
          rate(result.items, result.importSeconds),
        ],
      ],
    ),
    '',
    `Import throughput: **${times(result.ratio)}** the bare loop's. Memory: ${result.baseRssMiB.toFixed(0)} MiB RSS before, ` +
      `${result.peakRssMiB.toFixed(0)} MiB at the peak of the import.`,
    '',
  ].join('\n');
}

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

function sizingSection(results: BenchResults): string {
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

function bundlesSection(bundles: readonly Bundle[], floors: readonly FloorBundle[]): string {
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

/** The chart the report links as CHART_FILE, from the same numbers. */
export function renderChart(results: BenchResults): string {
  return floorChart(
    floorRows(results),
    `Each function against its floor (npm run bench${results.quick ? ' --quick' : ''}, ${results.date.toISOString().slice(0, 10)})`,
  );
}

export function renderReport(results: BenchResults): string {
  const { machine } = results;
  const summary = targets(results).map((target) => [
    target.name,
    target.measured,
    target.limit,
    verdict(target.pass),
  ]);
  return [
    '# Performance',
    '',
    `<!-- Generated by \`npm run bench\` (dev/bench.ts); do not edit by hand. -->`,
    '',
    'For engineers checking the functions’ speed and size against their floors: the numbers of the',
    'last `npm run bench`. How it measures and what the numbers decided:',
    '[performance-design.md](performance-design.md).',
    '',
    `Generated by \`npm run bench\`${results.quick ? ' **--quick (smoke run: too few iterations to mean anything)**' : ''} on ${results.date.toISOString()}, in ${results.seconds.toFixed(0)} s.`,
    '',
    table(
      ['Machine', ''],
      [
        ['CPU', `${machine.cpu} × ${machine.cores}`],
        ['Memory', `${machine.memoryGiB.toFixed(1)} GiB`],
        ['OS', machine.os],
        ['Node.js', machine.node],
        ['Commit', machine.commit],
      ],
    ),
    '',
    '## Targets',
    '',
    'Each against a floor measured in this run: the least the function’s work needs, built or',
    'timed the same way. Reported, not enforced: a FAIL here is a defect to look at.',
    '',
    table(['Target', 'Measured', 'Limit', 'Result'], summary),
    '',
    `![Each function's time against its floor](${CHART_FILE})`,
    '',
    tradedSection(results),
    coldInitSection(results),
    authorizerSection(results.authorizer),
    loginSection(results.login, results.roundTrips.operations.find((op) => op.operation === 'login')?.total),
    roundTripsSection(results.roundTrips),
    bundlesSection(results.bundles, results.floors),
    coldStartSection(results.coldStart),
    loadSection(results.load),
    sizingSection(results),
    importSection(results.bulkImport),
    grantSection(results.grant),
    compareSection(results.compare),
    '## How to reproduce',
    '',
    '```sh',
    'npm ci',
    'npm run bench            # about six minutes on two cores; rewrites docs/PERFORMANCE.md',
    'npm run bench -- --quick # a smoke run of a few iterations; writes to stdout or --out FILE',
    '```',
    '',
    'Close other work first: the figures are only as quiet as the machine.',
    '',
    '## How to read',
    '',
    'How each part is timed, what its floor is and what the figures leave out:',
    '[performance-design.md](performance-design.md#how-to-read-performancemd); each target’s limit and',
    'the text of the tables: dev/bench/targets.json.',
    '',
  ].join('\n');
}
