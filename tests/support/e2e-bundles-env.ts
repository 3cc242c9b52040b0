/** vitest setup file beside tests/support/e2e-bundles.ts: the stacks of this file serve the run's bundles. */
import { inject } from 'vitest';

process.env.LOCAL_STACK_BUNDLES = inject('localStackBundles');
