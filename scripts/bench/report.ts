/** docs/PERFORMANCE.md: the tables, the targets as pass/fail, the machine, how to reproduce. */
import type { Sample } from './measure.ts';
import type { AuthorizerResult, Bundle, LoginResult, RoundTripsResult } from './results.ts';

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
  readonly roundTrips: RoundTripsResult;
  readonly bundles: readonly Bundle[];
}

interface Target {
  readonly name: string;
  readonly measured: string;
  readonly limit: string;
  readonly pass: boolean | undefined;
}

const us = (value: number) => `${value.toFixed(1)} µs`;
const ms = (value: number) => `${(value / 1000).toFixed(2)} ms`;
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

const KIB_20 = 20 * 1024;

function targets(results: BenchResults): Target[] {
  const cached = results.authorizer.find((result) => result.revocationCacheTtl === '30s');
  const cost10 = results.login.find((result) => result.cost === 10);
  const cost4 = results.login.find((result) => result.cost === 4);
  const extendedTrips = results.roundTrips.operations.find((op) => op.operation === 'login-extended');
  const authorizerBundle = results.bundles.find((bundle) => bundle.function === 'authorizer');
  const list: Target[] = [];
  if (cached !== undefined) {
    const ratio = cached.samples.handler.medianUs / cached.samples.jose.medianUs;
    list.push({
      name: 'Authorizer warm (revocation cache 30s) ÷ bare jose jwtVerify',
      measured: exactTimes(ratio),
      limit: '≤ 1.10×',
      pass: ratio <= 1.1,
    });
  }
  if (cost10 !== undefined) {
    for (const [name, sample] of [
      ['Login', cost10.samples.login],
      ['Login-extended', cost10.samples.loginExtended],
    ] as const) {
      const ratio = sample.medianUs / cost10.samples.compare.medianUs;
      list.push({
        name: `${name} warm ÷ bcrypt compare alone, cost 10`,
        measured: exactTimes(ratio),
        limit: '≤ 1.05×',
        pass: ratio <= 1.05,
      });
    }
  }
  if (cost4 !== undefined) {
    for (const [name, sample] of [
      ['Login', cost4.samples.login],
      ['Login-extended', cost4.samples.loginExtended],
    ] as const) {
      const overhead = sample.medianUs - cost4.samples.compare.medianUs;
      list.push({
        name: `${name} warm, overhead beyond the compare, cost 4`,
        measured: ms(overhead),
        limit: '≤ 2 ms',
        pass: overhead <= 2000,
      });
    }
  }
  list.push({
    name: 'Login-extended DynamoDB round trips',
    measured: extendedTrips === undefined ? 'n/a' : String(extendedTrips.total),
    limit: '1',
    pass: extendedTrips === undefined ? undefined : extendedTrips.total <= 1,
  });
  list.push({
    name: 'Authorizer artifact (zip)',
    measured: authorizerBundle === undefined ? 'n/a' : kib(authorizerBundle.zipBytes),
    limit: '≤ 20 KiB',
    pass: authorizerBundle === undefined ? undefined : authorizerBundle.zipBytes <= KIB_20,
  });
  return list;
}

function authorizerSection(results: readonly AuthorizerResult[]): string {
  const parts = results.map((result) => {
    const { handler, jose, floor } = result.samples;
    const rows = [
      ['Real handler, REQUEST event', us(handler.medianUs), spread(handler, us), plan(handler)],
      ['Bare jose `jwtVerify` (same token, key, options)', us(jose.medianUs), spread(jose, us), plan(jose)],
      ['Floor: bare node:crypto Ed25519 verify', us(floor.medianUs), spread(floor, us), plan(floor)],
    ];
    const ratios = [
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

function loginSection(results: readonly LoginResult[]): string {
  const parts = results.map((result) => {
    const { login, loginExtended, compare } = result.samples;
    const rows = [
      ['Login handler', ms(login.medianUs), spread(login, ms), plan(login)],
      ['Login-extended handler', ms(loginExtended.medianUs), spread(loginExtended, ms), plan(loginExtended)],
      [
        'bcryptjs `compare` alone (same password and hash)',
        ms(compare.medianUs),
        spread(compare, ms),
        plan(compare),
      ],
    ];
    const derived = [
      ['Login ÷ compare', times(login.medianUs / compare.medianUs)],
      ['Login-extended ÷ compare', times(loginExtended.medianUs / compare.medianUs)],
      ['Login − compare (overhead)', ms(login.medianUs - compare.medianUs)],
      ['Login-extended − compare (overhead)', ms(loginExtended.medianUs - compare.medianUs)],
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
    ...parts.flatMap((part) => [part, '']),
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

function bundlesSection(bundles: readonly Bundle[]): string {
  const rows = bundles.map((bundle) => [
    bundle.function,
    kib(bundle.zipBytes),
    `\`${bundle.entry}\``,
    kib(bundle.rawBytes),
    kib(bundle.gzipBytes),
  ]);
  return [
    '## 4. Bundles (`serverless package --stage prod`)',
    '',
    table(['Function', 'Zip (deployed)', 'Bundle', 'Bundle raw', 'Bundle gzip'], rows),
    '',
  ].join('\n');
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
    `<!-- Generated by \`npm run bench\` (scripts/bench.ts); do not edit by hand. -->`,
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
    'Reported, not enforced.',
    '',
    table(['Target', 'Measured', 'Limit', 'Result'], summary),
    '',
    authorizerSection(results.authorizer),
    loginSection(results.login),
    roundTripsSection(results.roundTrips),
    bundlesSection(results.bundles),
    '## How to reproduce',
    '',
    '```sh',
    'npm ci',
    'npm run bench            # about a minute on two cores; rewrites docs/PERFORMANCE.md',
    'npm run bench -- --quick # a smoke run of a few iterations; writes to stdout or --out FILE',
    '```',
    '',
    'Close other work first: the figures are only as quiet as the machine.',
    '',
    '## How to read',
    '',
    '- Each timed part runs in its own Node.js process (handlers read their configuration once, at',
    '  import), with the real handlers imported in-process as tests/integration/handlers.test.ts',
    '  does, the production values of LOG_LEVEL, token lifetimes, key reload interval and bcrypt',
    '  cost, and the embedded DynamoDB (dynalite) in the parent process, reached over loopback.',
    '- Warm-up calls are discarded. Then, in every round, each variant runs the same number of',
    '  calls back to back, the variants taking turns in a rotating order; a variant’s figure is the',
    '  median of its per-round means. Ratios are ratios of those medians; p25 – p75 shows how much',
    '  the round means spread. Both sides of a ratio get the same input: the same token and key',
    '  (authorizer), the same password and stored hash at the same cost (login).',
    '- The authorizer floor is one Ed25519 verify of the token’s signing input with node:crypto;',
    '  jose adds JOSE header and claim checks and its WebCrypto call; the handler adds header',
    '  parsing, the key lookup, the revocation check and the policy.',
    '- Login overhead is what a login costs beyond its one bcrypt compare: DynamoDB requests to',
    '  the embedded DynamoDB on loopback, two Ed25519 signatures, the middy chain and the log',
    '  line. Against DynamoDB in AWS each round trip costs more than on loopback.',
    '- Round trips are HTTP requests counted at a proxy between the handlers and DynamoDB, by',
    '  `X-Amz-Target` action; requests that overlap in time form one sequential step.',
    '- Sizes are of the zips `serverless package` builds and of the single bundled `.mjs` in',
    '  each, raw and gzip (zlib default level). The 20 KiB target is checked on the zip.',
    '',
  ].join('\n');
}
