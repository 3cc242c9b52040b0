/**
 * The metrics adapter: the domain's events (lib/metrics/metrics.ts) as CloudWatch Embedded
 * Metric Format lines, written by Powertools for AWS Lambda's Metrics to stdout. Lambda sends
 * stdout to the function's log group and CloudWatch turns each EMF line into metric data:
 * no PutMetricData call, no extra IAM permission, no latency on the request.
 *
 * Namespace `parcel-auth` (the service), dimensions `service` (Powertools' own, always
 * `parcel-auth`) and `stage`, and for a few metrics one more of a fixed vocabulary
 * (`reason`, `counter`). Events are counted during an invocation and written at its end by
 * `flush` (or Powertools' `logMetrics` middleware), one line per dimension set; an invocation
 * that counted nothing writes nothing.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { describeError, type Logger } from '../log.ts';
import { SERVICE } from '../stage.ts';
import { dimensionsOf, type MetricEvent, type MetricsRecorder } from './metrics.ts';

export interface FlushingMetrics extends MetricsRecorder {
  /** Writes what was counted since the last flush as EMF lines, and forgets it. Never throws. */
  flush(): void;
  /** The Powertools Metrics behind it, for `logMetrics`: its `publishStoredMetrics` is `flush`. */
  readonly powertools: Metrics;
}

export function createEmfMetrics(options: {
  readonly stage: string;
  /** Where Powertools reports its own problems (an invalid metric, say). */
  readonly logger: Logger;
}): FlushingMetrics {
  // Per invocation: one entry per metric and dimension values, with how often it happened.
  const pending = new Map<string, { event: MetricEvent; count: number }>();
  // Counted here and handed to Powertools only at publish: an event counted twice is one
  // value of 2. Powertools warns "No application metrics to publish" whenever its own buffer
  // is empty at publish, so it is asked to publish only when that buffer holds something.
  const PendingMetrics = class extends Metrics {
    override publishStoredMetrics(): this {
      const events = [...pending.values()];
      pending.clear();
      try {
        for (const { event, count } of events) {
          const dimensions = Object.entries(dimensionsOf(event));
          if (dimensions.length === 0) {
            this.addMetric(event.name, MetricUnit.Count, count);
            continue;
          }
          // A metric with a dimension of its own gets a line of its own: an EMF line has one
          // dimension set for all its metrics. singleMetric publishes at addMetric.
          const single = this.singleMetric();
          for (const [name, value] of dimensions) single.addDimension(name, value);
          single.addMetric(event.name, MetricUnit.Count, count);
        }
        // Empty when nothing was counted, or when every metric had a dimension of its own.
        if (this.hasStoredMetrics()) super.publishStoredMetrics();
      } catch (error) {
        // Metrics never cost a request its answer.
        options.logger.warn('metrics not published', { error: describeError(error) });
        this.clearMetrics();
      }
      return this;
    }
  };
  const metrics = new PendingMetrics({
    namespace: SERVICE,
    serviceName: SERVICE,
    defaultDimensions: { stage: options.stage },
    logger: options.logger,
  });
  return {
    count(event) {
      const key = JSON.stringify(event);
      const entry = pending.get(key);
      if (entry === undefined) pending.set(key, { event, count: 1 });
      else entry.count += 1;
    },
    flush: () => void metrics.publishStoredMetrics(),
    powertools: metrics,
  };
}
