/** lib/metrics/powertools.ts: the domain's events as EMF lines, written once per invocation. */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { authorizerHandler } from '../../lib/http/authorizer-handler.ts';
import { createLogger } from '../../lib/log.ts';
import { createEmfMetrics } from '../../lib/metrics/powertools.ts';
import { lambdaContext } from '../fixtures/events.ts';
import { captureMetricLines } from '../support/metrics-capture.ts';

const warnings: string[] = [];
const logger = createLogger('warn', (line) => warnings.push(line));

beforeEach(() => {
  warnings.length = 0;
  // Powertools reads it at construction: each test's recorder writes its lines.
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  return () => vi.unstubAllEnvs();
});

const captured = captureMetricLines();

describe('EMF metrics', () => {
  it('writes nothing until the invocation is flushed, and nothing for an invocation that counted nothing', () => {
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    metrics.flush();
    metrics.count({ name: 'LoginSucceeded' });
    expect(captured.lines()).toEqual([]);
    metrics.flush();
    expect(captured.summary()).toEqual(['LoginSucceeded=1']);
    expect(warnings).toEqual([]);
  });

  it('warns nothing for an invocation whose every metric has a dimension of its own (a refusal)', () => {
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    metrics.count({ name: 'LoginFailed', reason: 'BadPassword' });
    metrics.flush();
    expect(captured.summary()).toEqual(['LoginFailed{reason=BadPassword}=1']);
    expect(warnings).toEqual([]);
  });

  it('adds up an event counted several times, and writes a metric with its own dimension on its own line', () => {
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    metrics.count({ name: 'LoginFailed', reason: 'UnknownUser' });
    metrics.count({ name: 'RevocationCacheHit' });
    metrics.count({ name: 'LockoutStarted', counter: 'SourceAddress' });
    metrics.count({ name: 'LoginFailed', reason: 'UnknownUser' });
    metrics.count({ name: 'AuthorizerAllow' });
    metrics.flush();

    expect(captured.summary()).toEqual([
      'LoginFailed{reason=UnknownUser}=2',
      'LockoutStarted{counter=SourceAddress}=1',
      'RevocationCacheHit=1',
      'AuthorizerAllow=1',
    ]);
    expect(captured.lines().map((line) => line._aws.CloudWatchMetrics[0]?.Dimensions)).toEqual([
      [['service', 'stage', 'reason']],
      [['service', 'stage', 'counter']],
      [['service', 'stage']],
    ]);
    for (const line of captured.lines())
      expect(line).toMatchObject({ service: 'parcel-auth', stage: 'prod' });
  });

  it('forgets what it wrote: the next invocation starts from nothing', () => {
    const metrics = createEmfMetrics({ stage: 'dev', logger });
    metrics.count({ name: 'Refresh' });
    metrics.flush();
    metrics.flush();
    metrics.count({ name: 'Logout' });
    metrics.flush();
    expect(captured.summary()).toEqual(['Refresh=1', 'Logout=1']);
  });

  it('writes the authorizer’s metrics when it answers and when it throws, and rethrows its very error', async () => {
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    const denial = new Error('Unauthorized');
    const handler = authorizerHandler({
      logger,
      metrics,
      handle: async (allow: boolean) => {
        if (!allow) {
          metrics.count({ name: 'AuthorizerDeny', reason: 'Revoked' });
          throw denial;
        }
        metrics.count({ name: 'AuthorizerAllow' });
        return 'allowed';
      },
    });
    await expect(handler(true, lambdaContext())).resolves.toBe('allowed');
    await expect(handler(false, lambdaContext())).rejects.toBe(denial);
    expect(captured.summary()).toEqual(['AuthorizerAllow=1', 'AuthorizerDeny{reason=Revoked}=1']);
  });

  it('writes nothing and warns nothing for an authorizer invocation that counted nothing', async () => {
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    const handler = authorizerHandler({ logger, metrics, handle: async () => 'counted nothing' });
    await expect(handler(undefined, lambdaContext())).resolves.toBe('counted nothing');
    await expect(handler(undefined)).resolves.toBe('counted nothing');
    expect(captured.lines()).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('writes nothing when POWERTOOLS_METRICS_DISABLED is set, as the test harness does', () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    const metrics = createEmfMetrics({ stage: 'prod', logger });
    metrics.count({ name: 'LoginSucceeded' });
    metrics.flush();
    expect(captured.lines()).toEqual([]);
  });
});
