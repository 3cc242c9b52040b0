import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The e2e stacks and `serverless package` take a few seconds each to start.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // TMPDIR of the run's own, removed at its end; the run fails if a test left something there.
    globalSetup: ['tests/support/run-tmpdir.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['tests/integration/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['tests/e2e/**/*.test.ts'] } },
    ],
  },
});
