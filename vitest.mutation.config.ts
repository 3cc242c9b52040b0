/**
 * The tests `npm run mutation` runs against each mutant of lib/: the unit and integration
 * projects, without the fault matrix unless MUTATION_WITH_FAULTS=1. The e2e project runs lib/
 * in other processes, where the mutants are not switched on; the fault matrix reruns whole
 * operations under a proxy for every mutant it covers, which triples the run (docs/MUTATION.md).
 */
import { defineConfig } from 'vitest/config';
import base, { FAULT_MATRIX } from './vitest.config.ts';

const MUTATION_PROJECTS = ['unit', 'integration'];
const excluded = process.env.MUTATION_WITH_FAULTS === '1' ? [] : [FAULT_MATRIX];

export default defineConfig({
  test: {
    ...base.test,
    projects: (base.test?.projects ?? []).flatMap((project) =>
      typeof project === 'object' &&
      'test' in project &&
      MUTATION_PROJECTS.includes(project.test?.name as string)
        ? [
            {
              ...project,
              test: { ...project.test, exclude: [...(project.test?.exclude ?? []), ...excluded] },
            },
          ]
        : [],
    ),
  },
});
