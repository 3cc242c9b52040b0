/** The chart beside the report (chart.ts draws it): per function, its time against its floor, from this run. */
import { type FloorRow, floorChart } from './chart.ts';
import { beyondEmpty, REACHABLE_FLOOR } from './report-artifacts.ts';
import { duration, ms, plainMs, us } from './report-format.ts';
import type { BenchResults } from './report-run.ts';
import { limitOf } from './report-targets.ts';

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

/** The chart the report links as CHART_FILE, from the same numbers. */
export function renderChart(results: BenchResults): string {
  return floorChart(
    floorRows(results),
    `Each function against its floor (npm run bench${results.quick ? ' --quick' : ''}, ${results.date.toISOString().slice(0, 10)})`,
  );
}
