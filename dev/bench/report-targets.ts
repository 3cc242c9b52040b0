/**
 * The report's verdicts: each target of targets.json against the value this run measured for
 * it, pass or FAIL, and the traded targets, shown and never failed.
 */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { beyondEmpty, LOGGED_FLOOR, REACHABLE_FLOOR } from './report-artifacts.ts';
import { exactTimes, kib, ms, plainMs, table, times, us, verdict } from './report-format.ts';
import { PEER_GRANTS, peerRatios, throttleCountingUs } from './report-platform.ts';
import type { BenchResults } from './report-run.ts';

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

/** A target's limit from targets.json, by its metric: the chart draws the same line. */
export const limitOf = (metric: string) =>
  TARGETS.targets.find((spec) => spec.metric === metric)?.limit ?? Number.NaN;

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
  const loggedFloor = results.floors.find((floor) => floor.floor === LOGGED_FLOOR);
  if (authorizerBundle !== undefined) {
    set('authorizerZipBytes', authorizerBundle.zipBytes);
    if (reachableFloor !== undefined)
      set('authorizerBundleBare', authorizerBundle.gzipBytes / reachableFloor.gzipBytes);
    if (loggedFloor !== undefined)
      set('authorizerBundle', authorizerBundle.gzipBytes / loggedFloor.gzipBytes);
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
  const { keyGrant, keyGrantFloor } = results.grant.samples;
  set('keyGrantRatio', keyGrant.medianUs / keyGrantFloor.medianUs);
  set('keyGrantOverGrant', keyGrant.medianUs / grant.medianUs);
  const { dpopCall, dpopFloor } = results.grant.samples;
  set('dpopCallRatio', dpopCall.medianUs / dpopFloor.medianUs);
  set(
    'introspectionRatio',
    results.grant.samples.introspect.medianUs / results.grant.samples.introspectFloor.medianUs,
  );
  set('grantOverBareWork', grant.medianUs / (secretCheck.medianUs + getItem.medianUs + sign.medianUs));
  const platform = results.platform.samples;
  set('codeExchangeRatio', platform.exchange.medianUs / platform.exchangeFloor.medianUs);
  set('connectionRefreshRatio', platform.refresh.medianUs / platform.refreshFloor.medianUs);
  set('throttleCounting', throttleCountingUs(results.platform));
  for (const [grant, ratio] of Object.entries(peerRatios(results.platform))) {
    set(`peer:${PEER_GRANTS[grant as keyof typeof PEER_GRANTS]}`, ratio.measured);
    set(`peerWithoutCounting:${PEER_GRANTS[grant as keyof typeof PEER_GRANTS]}`, ratio.withoutCounting);
  }
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
    if (name === 'throttleCounting') return ms(values.get(name) ?? Number.NaN);
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

export function tradedSection(results: BenchResults): string {
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

/** The targets' table: each target against its floor, as measured in this run. */
export function targetsSection(results: BenchResults): string {
  const summary = targets(results).map((target) => [
    target.name,
    target.measured,
    target.limit,
    verdict(target.pass),
  ]);
  return [
    '## Targets',
    '',
    'Each against a floor measured in this run: the least the function’s work needs, built or',
    'timed the same way. Reported, not enforced: a FAIL here is a defect to look at.',
    '',
    table(['Target', 'Measured', 'Limit', 'Result'], summary),
    '',
  ].join('\n');
}
