/** How the report prints a figure (µs, ms, ratios, KiB, a verdict) and a Markdown table. */
import type { Sample } from './measure.ts';

export const us = (value: number) => `${value.toFixed(1)} µs`;
/** A figure in µs, printed in ms. */
export const ms = (value: number) => `${(value / 1000).toFixed(2)} ms`;
/** A figure in ms, printed so. */
export const plainMs = (value: number) => `${value.toFixed(1)} ms`;
/** µs below a millisecond, ms above: the grant's parts span three orders of magnitude. */
export const duration = (value: number) => (Math.abs(value) < 1000 ? us(value) : ms(value));
export const times = (value: number) => `${value.toFixed(2)}×`;
/** Three decimals where a verdict hangs on it: 1.104× must not read as a failing 1.10×. */
export const exactTimes = (value: number) => `${value.toFixed(3)}×`;
export const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
export const verdict = (pass: boolean | undefined) =>
  pass === undefined ? 'n/a' : pass ? 'pass' : '**FAIL**';
export const spread = (sample: Sample, unit: (value: number) => string) =>
  `${unit(sample.p25Us)} – ${unit(sample.p75Us)}`;
export const plan = (sample: Sample) => `${sample.rounds} × ${sample.callsPerRound}`;

/** A sample's row of a warm-call table (SAMPLE_HEADER): its median, spread and plan in `unit`. */
export const sampleRow = (variant: string, sample: Sample, unit: (value: number) => string = duration) => [
  variant,
  unit(sample.medianUs),
  spread(sample, unit),
  plan(sample),
];
export const SAMPLE_HEADER = [
  'Variant',
  'Median per call',
  'Round means p25 – p75',
  'Rounds × calls',
] as const;

/** A Markdown table. */
export const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
