/** The one way the trail is written (lib/audit/recorder.ts): a failed write is counted and told, never thrown. */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../lib/audit/audit.ts';
import { type AuditWriteFailure, createAuditRecorder } from '../../lib/audit/recorder.ts';
import { createMemoryMetrics } from '../support/memory-metrics.ts';

const AT = new Date('2026-12-01T12:00:00.000Z');
const EVENT = {
  customerId: 'C-1001',
  type: 'client.authentication.failed',
  actor: 'client:pcl_00000000000000000001',
  source: 'api',
  clientId: 'pcl_00000000000000000001',
} as const;

describe('the audit recorder', () => {
  it('appends the event as it happens now, kept for the retention', async () => {
    const appended: AuditEvent[] = [];
    const recorder = createAuditRecorder({
      trail: { append: async (event) => void appended.push(event) },
      retentionSeconds: 3600,
      metrics: createMemoryMetrics(),
      warn: () => {},
      clock: () => AT,
    });
    await recorder.record(EVENT);
    expect(appended).toEqual([{ ...EVENT, at: AT.toISOString(), expiresAt: AT.getTime() / 1000 + 3600 }]);
  });

  it('counts AuditWriteFailed and tells every failed write, an append or another write, and never rejects', async () => {
    const metrics = createMemoryMetrics();
    const told: AuditWriteFailure[] = [];
    const down = new Error('DynamoDB unreachable');
    const recorder = createAuditRecorder({
      trail: { append: () => Promise.reject(down) },
      retentionSeconds: 3600,
      metrics,
      warn: (failure) => told.push(failure),
      clock: () => AT,
    });
    await expect(recorder.record(EVENT)).resolves.toBeUndefined();
    await expect(
      recorder.guard(
        { type: 'client.secret.expired', customerId: 'C-1001', secretId: '0000000a', write: 'taken back' },
        () => Promise.reject(down),
      ),
    ).resolves.toBeUndefined();
    expect(metrics.names()).toEqual(['AuditWriteFailed', 'AuditWriteFailed']);
    expect(told.map(({ type, write, error }) => [type, write, error])).toEqual([
      ['client.authentication.failed', 'recorded', down],
      ['client.secret.expired', 'taken back', down],
    ]);
  });
});
