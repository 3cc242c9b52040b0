/**
 * The service's log lines (lib/log.ts writes one JSON line per event to stderr) kept out of
 * the test output while each test of the calling file runs, for the tests to assert on.
 * Anything else written to stderr passes through.
 */
import { afterEach, beforeEach, type MockInstance, vi } from 'vitest';
import { SERVICE } from '../../lib/stage.ts';

export interface CapturedLogs {
  /** This test's service lines, parsed, in order. */
  lines(): Record<string, unknown>[];
  /** This test's lines of one event, e.g. `lockout started`. */
  events(event: string): Record<string, unknown>[];
}

/** Call at the top of a file or describe block whose handlers log through the container logger. */
export function captureServiceLogs(): CapturedLogs {
  let captured: Record<string, unknown>[] = [];
  let spy: MockInstance | undefined;
  beforeEach(() => {
    captured = [];
    const write = process.stderr.write.bind(process.stderr);
    spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk, ...rest) => {
      const line = serviceLine(String(chunk));
      if (line === undefined) return write(chunk, ...(rest as [BufferEncoding]));
      captured.push(line);
      return true;
    });
  });
  afterEach(() => spy?.mockRestore());
  return {
    lines: () => captured,
    events: (event) => captured.filter((line) => line.event === event),
  };
}

function serviceLine(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return parsed.service === SERVICE ? parsed : undefined;
  } catch {
    return undefined;
  }
}
