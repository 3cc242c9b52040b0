/**
 * The test projects `npm run mutation` runs against each mutant of lib/: unit and
 * integration only. The e2e project starts servers and child processes, which neither suit
 * a run per mutant nor see the mutants (those are switched on inside the test process).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

const MUTATION_PROJECTS = ['unit', 'integration'];

export default defineConfig({
  test: {
    ...base.test,
    projects: (base.test?.projects ?? []).filter(
      (project) =>
        typeof project === 'object' &&
        'test' in project &&
        MUTATION_PROJECTS.includes(project.test?.name as string),
    ),
  },
});
