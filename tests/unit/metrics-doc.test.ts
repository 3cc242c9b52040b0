/**
 * docs/OPERATIONS-DASHBOARD.md's table of the service's metrics against the catalogue
 * (lib/metrics/metrics.ts): every metric has a row naming each value of its dimension, and no
 * row names a metric the functions never write.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../lib/metrics/metrics.ts';

const doc = readFileSync(resolve(import.meta.dirname, '../../docs/OPERATIONS-DASHBOARD.md'), 'utf8');
const start = doc.indexOf("## The service's metrics");
const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
/** Each row's metric names (first cell) and its dimension cell. */
const rows = section
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .map((line) => {
    const [names = '', dimension = ''] = line.slice(1, -1).split('|');
    return { names: [...names.matchAll(/`(\w+)`/g)].map((m) => m[1] ?? ''), dimension: dimension.trim() };
  });

describe('docs/OPERATIONS-DASHBOARD.md: the service’s metrics', () => {
  it('has a row for every metric of the catalogue, and none for a metric not in it', () => {
    expect(rows.flatMap((row) => row.names).sort()).toEqual(Object.keys(METRICS).sort());
  });

  it('names each metric’s dimension with exactly its values', () => {
    for (const [name, dimensions] of Object.entries(METRICS)) {
      const row = rows.find((each) => each.names.includes(name));
      const expected = Object.entries(dimensions as Record<string, readonly string[]>)
        .map(([dimension, values]) => `\`${dimension}\`: ${values.map((value) => `\`${value}\``).join(', ')}`)
        .join('; ');
      expect(row?.dimension, name).toBe(expected);
    }
  });
});
