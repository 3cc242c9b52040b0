/**
 * vitest globalSetup: the test run's own temporary directory. Every process of the run (the
 * workers, the local stacks, serverless, Chromium, the documents' shell examples) inherits a
 * TMPDIR inside it, so what the run leaves under os.tmpdir() is found there, and only this
 * run's: other runs on the same machine have their own. At the end the run fails, naming
 * what was left, and the directory is removed either way.
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a test keeps on purpose for a person to look at (docs/testing.md): copied to the system's TMPDIR. */
const KEPT = ['parcel-auth-artifacts'];
/** Not left behind but a cache: Node.js's compile cache, which npm, tsc and vite keep under TMPDIR. */
const CACHES = ['node-compile-cache'];

export async function setup(): Promise<() => Promise<void>> {
  const system = tmpdir();
  const original = process.env.TMPDIR;
  const run = await mkdtemp(join(system, 'parcel-auth-test-run-'));
  process.env.TMPDIR = run;
  return async () => {
    if (original === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = original;
    try {
      const entries = await readdir(run);
      for (const name of entries.filter((entry) => KEPT.includes(entry)))
        await cp(join(run, name), join(system, name), { recursive: true, force: true });
      const left = entries.filter((entry) => !KEPT.includes(entry) && !CACHES.includes(entry));
      if (left.length > 0) {
        throw new Error(
          `the test run left behind in its TMPDIR (${run}, removed now): ${left.join(', ')}. ` +
            'A test removes what it makes, in an afterAll or afterEach, failed or not.',
        );
      }
    } finally {
      await rm(run, { recursive: true, force: true });
    }
  };
}
