/**
 * The work behind the timings: DynamoDB round trips per operation (section 3), the local
 * stack under load (section 6) and the bulk import (section 8).
 */
import { plainMs, table, times } from './report-format.ts';
import type { ImportBenchResult, LoadResult, RoundTripsResult } from './results.ts';

export function roundTripsSection(result: RoundTripsResult): string {
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

export function loadSection(result: LoadResult): string {
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

export function importSection(result: ImportBenchResult): string {
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
