/**
 * The administrators' console's script: lib/console/main.ts and the modules it imports, bundled
 * by esbuild for the browser into lib/console/console.js, the one script the page loads. That
 * file is built, never committed (lib/console/.gitignore), and built before anything reads it:
 *
 * - by the console function's own bundle: serverless-esbuild runs this file's plugin
 *   (serverless.yml `custom.esbuild.plugins`), so `serverless package` and `deploy` zip, and
 *   `serverless offline` (npm start, the tests' stacks, their rebuilds on a change) serve, the
 *   script of the sources they bundle with;
 * - by `npm ci` and before `npm test` (package.json `prepare`, `pretest`), so the tree has it for
 *   what reads the tree itself (the unit tests, the bench's unbundled variant), on a fresh clone
 *   and on one installed before the script was built;
 * - by tests/unit/console.test.ts, which serves what it has just built.
 *
 * Run as `node infra/console-script.ts`, it builds the file.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type BuildFailure, build, type Plugin } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
/** Where the page's script is written: beside the page, where lib/console/serve.ts reads it. */
export const CONSOLE_SCRIPT = resolve(ROOT, 'lib/console/console.js');
const ENTRY = resolve(ROOT, 'lib/console/main.ts');
const CONSOLE_FUNCTION = resolve(ROOT, 'functions/console.ts');

/** The bundled script: one ES module with no imports left, as the CSP's `script-src 'self'` serves it. */
export async function bundleConsoleScript(): Promise<string> {
  const { outputFiles } = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    charset: 'utf8',
    legalComments: 'none',
    // The browser files' own: the DOM, and the server's modules they import types from.
    tsconfig: resolve(ROOT, 'lib/console/tsconfig.json'),
    logLevel: 'silent',
  });
  const [script] = outputFiles;
  if (script === undefined) throw new Error('esbuild wrote no console script');
  return script.text;
}

/**
 * Builds lib/console/console.js and answers its text. The file is replaced only when the build
 * differs, and whole (a rename): a local stack watches it, and stacks and tests started side by
 * side build it at the same time.
 */
export async function buildConsoleScript(): Promise<string> {
  const script = await bundleConsoleScript();
  const current = await readFile(CONSOLE_SCRIPT, 'utf8').catch(() => undefined);
  if (current !== script) {
    const partial = `${CONSOLE_SCRIPT}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(partial, script);
    await rename(partial, CONSOLE_SCRIPT);
  }
  return script;
}

const isBuildFailure = (error: unknown): error is BuildFailure =>
  error instanceof Error && Array.isArray((error as Partial<BuildFailure>).errors);

/** Builds the script when esbuild starts the console function's bundle; a failure fails that bundle. */
export const consoleScriptPlugin: Plugin = {
  name: 'console-script',
  setup(bundle) {
    const { entryPoints = [], absWorkingDir = process.cwd() } = bundle.initialOptions;
    const entries = Array.isArray(entryPoints)
      ? entryPoints.map((entry) => (typeof entry === 'string' ? entry : entry.in))
      : Object.values(entryPoints);
    if (!entries.some((entry) => resolve(absWorkingDir, entry) === CONSOLE_FUNCTION)) return;
    bundle.onStart(async () => {
      try {
        await buildConsoleScript();
        return {};
      } catch (error) {
        return { errors: isBuildFailure(error) ? error.errors : [{ text: String(error) }] };
      }
    });
  },
};

/** serverless-esbuild's `plugins` file: the plugins every function's bundle runs. */
export default [consoleScriptPlugin];

if (import.meta.main) {
  buildConsoleScript().catch((error: unknown) => {
    console.error(isBuildFailure(error) ? error.message : error);
    process.exitCode = 1;
  });
}
