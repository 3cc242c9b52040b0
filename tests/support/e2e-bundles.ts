/**
 * vitest globalSetup of the projects that start local stacks (e2e, long): every function's
 * bundle built once for the project's run, which each stack then serves unbuilt
 * (dev/local/stack.ts, infra/local-prebuilt.cjs) instead of building all fifteen itself.
 * tests/support/e2e-bundles-env.ts hands the folder to the test files.
 */
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildLocalBundles } from '../../dev/local/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The work folder, relative to the project, that holds this run's bundles. */
    localStackBundles: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const workFolder = `.esbuild/bundles-${process.pid}-${project.name}`;
  const remove = () =>
    rm(resolve(import.meta.dirname, '../..', workFolder), { recursive: true, force: true });
  try {
    await buildLocalBundles(workFolder);
  } catch (error) {
    await remove();
    throw error;
  }
  project.provide('localStackBundles', workFolder);
  return remove;
}
