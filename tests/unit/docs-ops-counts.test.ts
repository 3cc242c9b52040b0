/**
 * The operators' pages against the code they count: docs/OPERATIONS-DASHBOARD.md's table of
 * alarms against the alarms the stack creates, and docs/CAPACITY.md's fixed monthly cost against
 * the metrics, alarm metrics and web ACL rules behind it. A count lives in one page, held here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { METRICS } from '../../lib/metrics/metrics.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
/** CloudFormation's short tags (`!Ref`, `!If`) are left as the plain values they tag. */
const template = (path: string) =>
  parse(read(path), { logLevel: 'error' }) as { Resources: Record<string, Resource> };

interface Resource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}
interface AlarmProperties {
  readonly Period?: number;
  readonly TreatMissingData?: string;
  readonly Metrics?: readonly { readonly MetricStat?: { readonly Period: number } }[];
}

/** Every resource of the alarm templates: infra/alarms.yml and any alarms-*.yml beside it. */
const alarmResources = readdirSync(resolve(ROOT, 'infra'))
  .filter((file) => /^alarms.*\.yml$/.test(file))
  .flatMap((file) => Object.entries(template(`infra/${file}`).Resources));
const alarms = new Map(
  alarmResources
    .filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm')
    .map(([id, resource]) => [id, resource.Properties as AlarmProperties]),
);
/** What CloudWatch bills an alarm for: each metric it reads (metric math: each MetricStat). */
const metricsRead = (alarm: AlarmProperties) =>
  alarm.Metrics === undefined ? 1 : alarm.Metrics.filter((metric) => metric.MetricStat).length;

function section(page: string, heading: string): string {
  const start = page.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

describe('docs/OPERATIONS-DASHBOARD.md: the alarms', () => {
  const table = section(read('docs/OPERATIONS-DASHBOARD.md'), 'The alarms');

  it('has a row for every alarm of the stack, and none for an alarm it does not create', () => {
    const named = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`(\w+)`/g)].map((match) => match[1]));
    expect(named.sort()).toEqual([...alarms.keys()].sort());
  });

  it('is right that every alarm evaluates 5-minute periods and treats missing data as fine', () => {
    expect(table).toContain('Each alarm evaluates 5-minute periods and treats missing data as fine.');
    for (const [id, alarm] of alarms) {
      const periods = alarm.Metrics?.flatMap((metric) => metric.MetricStat?.Period ?? []) ?? [alarm.Period];
      expect({ id, periods: [...new Set(periods)], missing: alarm.TreatMissingData }).toEqual({
        id,
        periods: [300],
        missing: 'notBreaching',
      });
    }
  });
});

describe('docs/CAPACITY.md: the fixed monthly cost of a stage', () => {
  const text = read('docs/CAPACITY.md').replace(/\s+/g, ' ');
  const paragraph = text.slice(text.indexOf('**Fixed monthly cost of a stage**'));
  const figure = (pattern: RegExp) => {
    const match = pattern.exec(paragraph);
    expect(match, String(pattern)).not.toBeNull();
    return { count: Number(match?.[1]), dollars: Number(match?.[2]) };
  };
  // The prices of the page's own table: a custom metric $0.30, an alarm metric $0.10, a
  // web ACL $5.00 and a rule $1.00 a month, ATP $10.00 a month.
  const cents = (dollars: number) => Math.round(dollars * 100);

  it('counts a custom metric for each metric and dimension value the functions write, and the log metric', () => {
    // One metric per combination of its dimensions' values (one, for a metric without any).
    const combinations = (dimensions: Readonly<Record<string, readonly string[]>>) =>
      Object.values(dimensions).reduce((n, values) => n * values.length, 1);
    const emf = Object.values(METRICS as Record<string, Readonly<Record<string, readonly string[]>>>).reduce(
      (sum, dimensions) => sum + combinations(dimensions),
      0,
    );
    const logMetrics = alarmResources.filter(
      ([, resource]) => resource.Type === 'AWS::Logs::MetricFilter',
    ).length;
    const { count, dollars } = figure(/(\d+) custom metrics [^$]*\$(\d+\.\d\d)/);
    expect(count).toBe(emf + logMetrics);
    expect(cents(dollars)).toBe(count * 30);
  });

  it('counts each metric every alarm reads', () => {
    const { count, dollars } = figure(/(\d+) alarm metrics [^$]*\$(\d+\.\d\d)/);
    expect(count).toBe([...alarms.values()].reduce((sum, alarm) => sum + metricsRead(alarm), 0));
    expect(cents(dollars)).toBe(count * 10);
  });

  it('prices the web ACL by the rules it has, and one more with account takeover prevention', () => {
    const acl = template('infra/waf.yml').Resources.WebAcl?.Properties.Rules as readonly unknown[];
    // A rule under a condition (`!If`) reads as a list: the ATP rule group.
    const always = acl.filter((rule) => !Array.isArray(rule)).length;
    const conditional = acl.length - always;
    const { count, dollars } = figure(/web ACL and its (\d+) rules: \$(\d+\.\d\d)/);
    expect(count).toBe(always);
    expect(cents(dollars)).toBe(500 + count * 100);
    const withAtp = Number(
      /with ATP: one more rule and the subscription, \$(\d+\.\d\d)/.exec(paragraph)?.[1],
    );
    expect(conditional).toBe(1);
    expect(cents(withAtp)).toBe(500 + (count + conditional) * 100 + 1000);
  });
});
