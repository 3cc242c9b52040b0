/** A MetricsRecorder that keeps what the domain counted, for unit tests. */
import { dimensionsOf, type MetricEvent, type MetricsRecorder } from '../../lib/metrics/metrics.ts';

/** Counts nothing: for tests about something else. */
export const noMetrics: MetricsRecorder = { count() {} };

export interface MemoryMetrics extends MetricsRecorder {
  /** Every event counted so far, in order. */
  readonly events: MetricEvent[];
  /** The events as `Name` or `Name{dimension=value}`, in order: `LoginFailed{reason=Locked}`. */
  names(): string[];
}

export function createMemoryMetrics(): MemoryMetrics {
  const events: MetricEvent[] = [];
  return {
    events,
    count: (event) => events.push(event),
    names: () =>
      events.map((event) => {
        const dimensions = Object.entries(dimensionsOf(event)).map(([key, value]) => `${key}=${value}`);
        return dimensions.length === 0 ? event.name : `${event.name}{${dimensions.join(',')}}`;
      }),
  };
}
