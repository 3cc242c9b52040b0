import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './tests/support/sequencer.ts';

/**
 * What `npm test` leaves to `npm run test:long` (docs/testing.md): suites a change rarely
 * touches that cost a minute or more between them, the docs' own (the README's and
 * docs/admin.md's commands, the reference page in Chromium, the Postman collection) and the
 * outside clients' (tests/e2e/outside-clients.test.ts, Stoplight Prism). The fault matrix runs
 * in both: here each operation once, naming its call sites, there a fault at every call site
 * (tests/support/faults.ts).
 */
export const LONG_SUITES = [
  'tests/e2e/api-reference.test.ts',
  'tests/e2e/external-dynamodb.test.ts',
  'tests/e2e/lifecycle.test.ts',
  'tests/e2e/outside-clients.test.ts',
  'tests/e2e/postman.test.ts',
  'tests/e2e/prism.test.ts',
  'tests/e2e/readme-examples.test.ts',
  'tests/e2e/start.test.ts',
  'tests/integration/hot-key-load.test.ts',
];
/** Long suites that run `serverless package`: one at a time, after the others (project `package`). */
export const PACKAGE_SUITES = ['tests/integration/bench-smoke.test.ts', 'tests/e2e/package-variants.test.ts'];
export const FAULT_MATRIX = 'tests/integration/faults/**/*.test.ts';
const exclude = [...configDefaults.exclude, ...LONG_SUITES, ...PACKAGE_SUITES];
/** The projects that start local stacks build the functions' bundles once, for all their stacks. */
const stackBundles = {
  globalSetup: ['tests/support/e2e-bundles.ts'],
  setupFiles: ['tests/support/e2e-bundles-env.ts'],
};

export default defineConfig({
  test: {
    // The e2e stacks and `serverless package` take a few seconds each to start.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Most files wait on a server, a child process or DynamoDB, not on the CPU: two cores run
    // four files at a time (vitest's default would be one).
    maxWorkers: 4,
    sequence: { sequencer: LongestFirstSequencer },
    // TMPDIR of the run's own, removed at its end; the run fails if a test left something there.
    globalSetup: ['tests/support/run-tmpdir.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], exclude } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          exclude,
          // One DynamoDB Local for the project's suites, each in tables of its own.
          globalSetup: ['tests/support/dynamodb-local-run.ts'],
        },
      },
      { extends: true, test: { name: 'e2e', include: ['tests/e2e/**/*.test.ts'], exclude, ...stackBundles } },
      { extends: true, test: { name: 'long', include: LONG_SUITES, ...stackBundles } },
      {
        extends: true,
        test: {
          // One file at a time (vitest runs such a project's files after the others'): the bench
          // and the template variants each run `serverless package`, and two framework
          // processes started together share ~/.serverless.
          name: 'package',
          include: PACKAGE_SUITES,
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          // Beside `long` (vitest runs projects together): the matrix mostly waits on the SDK's
          // timeouts, and runs no serverless process.
          name: 'faults',
          include: [FAULT_MATRIX],
          env: { FAULT_MATRIX: process.env.FAULT_MATRIX ?? 'sample' },
        },
      },
    ],
  },
});
