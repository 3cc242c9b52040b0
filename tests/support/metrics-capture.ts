/**
 * The functions' metric lines (CloudWatch Embedded Metric Format, written by
 * lib/metrics/powertools.ts to stdout) kept out of the test output while each test of the
 * calling file runs, for the tests to assert on. Anything else written to stdout passes
 * through.
 */
import { afterEach, beforeEach, type MockInstance, vi } from 'vitest';

/** One EMF line, parsed: `_aws` says which keys are metrics and which are dimensions. */
export interface EmfLine {
  readonly _aws: {
    readonly Timestamp: number;
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [key: string]: unknown;
}

export interface CapturedMetrics {
  /** This test's EMF lines, parsed, in order. */
  lines(): EmfLine[];
  /**
   * This test's metrics as `Name{dimension=value,…}=value` in order, the stage and service
   * dimensions left out: `LoginFailed{reason=BadPassword}=1`.
   */
  summary(): string[];
}

/** Call at the top of a file or describe block whose handlers write metrics. */
export function captureMetricLines(): CapturedMetrics {
  let captured: EmfLine[] = [];
  let spy: MockInstance | undefined;
  beforeEach(() => {
    captured = [];
    const write = process.stdout.write.bind(process.stdout);
    spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk, ...rest) => {
      const lines = emfLines(String(chunk));
      if (lines.length === 0) return write(chunk, ...(rest as [BufferEncoding]));
      captured.push(...lines);
      return true;
    });
  });
  afterEach(() => spy?.mockRestore());
  return { lines: () => captured, summary: () => captured.flatMap(summarise) };
}

/** The EMF lines in a piece of output (a chunk of stdout, or a whole local stack's output). */
export function emfLines(text: string): EmfLine[] {
  return text.split('\n').flatMap((line) => {
    if (!line.startsWith('{"_aws"')) return [];
    try {
      return [JSON.parse(line) as EmfLine];
    } catch {
      return [];
    }
  });
}

/** `Name{dimension=value,…}=value` for every metric of a line; the stage and service left out. */
export function summarise(line: EmfLine): string[] {
  return line._aws.CloudWatchMetrics.flatMap((directive) =>
    directive.Metrics.map((metric) => {
      const dimensions = [...new Set(directive.Dimensions.flat())]
        .filter((name) => name !== 'service' && name !== 'stage')
        .map((name) => `${name}=${String(line[name])}`);
      const labels = dimensions.length === 0 ? '' : `{${dimensions.join(',')}}`;
      return `${metric.Name}${labels}=${JSON.stringify(line[metric.Name])}`;
    }),
  );
}
