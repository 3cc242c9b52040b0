// EMF lines on stdout via Powertools Metrics, flushed per invocation: no PutMetricData call, IAM
// permission or request latency (docs/operations.md, "Metrics, the dashboard and the alarms").
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { describeError, type Logger } from '../log.ts';
import { SERVICE } from '../stage.ts';
import { dimensionsOf, type MetricEvent, type MetricsRecorder } from './metrics.ts';

export interface FlushingMetrics extends MetricsRecorder {
  /** Never throws. */
  flush(): void;
  /** For `logMetrics`: its `publishStoredMetrics` is `flush`. */
  readonly powertools: Metrics;
}

export function createEmfMetrics(options: {
  readonly stage: string;
  readonly logger: Logger;
}): FlushingMetrics {
  const pending = new Map<string, { event: MetricEvent; count: number }>();
  // Counted here, so an event counted twice is one value of 2; Powertools publishes only a non-empty
  // buffer, as it warns "No application metrics to publish" otherwise.
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
          // Its own line: an EMF line has one dimension set. singleMetric publishes at addMetric.
          const single = this.singleMetric();
          for (const [name, value] of dimensions) single.addDimension(name, value);
          single.addMetric(event.name, MetricUnit.Count, count);
        }
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
