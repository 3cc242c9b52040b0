/** lib/http/authorizer-handler.ts: the authorizer's invocation around its decision. */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { authorizerHandler } from '../../lib/http/authorizer-handler.ts';
import { createLogger } from '../../lib/log.ts';
import { createEmfMetrics } from '../../lib/metrics/powertools.ts';
import { lambdaContext } from '../fixtures/events.ts';

function capturedHandler(handle: (event: string) => Promise<string>) {
  const lines: string[] = [];
  const logger = createLogger('info', (line) => lines.push(line));
  const handler = authorizerHandler({ logger, metrics: createEmfMetrics({ stage: 'test', logger }), handle });
  return { logger, handler, parsed: () => lines.map((line) => JSON.parse(line)) };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the authorizer’s handler', () => {
  it('answers a slow decision with little time left: Lambda’s own timeout ends a call, whose line the AuthorizerTimeouts alarm counts', async () => {
    const { handler } = capturedHandler(async (event) => {
      await sleep(30);
      return `decided ${event}`;
    });
    const almostOut = { ...lambdaContext(), getRemainingTimeInMillis: () => 1 };
    await expect(handler('late', almostOut)).resolves.toBe('decided late');
  });

  it('marks the container’s first invocation as its cold start on the lines it writes, and no later one', async () => {
    // As Lambda starts a container for a request (Powertools reads it when the logger is made).
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const { logger, handler, parsed } = capturedHandler(async (event) => {
      logger.info('decided', { decision: event });
      return event;
    });
    await handler('first', { ...lambdaContext(), awsRequestId: 'first' });
    await handler('second', { ...lambdaContext(), awsRequestId: 'second' });
    expect(parsed()).toMatchObject([
      { function_request_id: 'first', cold_start: true, function_name: 'parcel-auth-test' },
      { function_request_id: 'second', cold_start: false, function_name: 'parcel-auth-test' },
    ]);
  });
});
