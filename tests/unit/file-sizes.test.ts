/**
 * docs/layout.md's "files of one job": the source files of lib/ (what runs in Lambda) within
 * 400 lines, those of the other code folders within 500. Tests and generated files aside.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
/** Code, not data: a collection or a manifest in JSON is read whole, never in part. */
const SOURCE = /\.(ts|js|mjs|cjs|sh|py)$|^run$/;
/** Written by a build step from files that are held here themselves (gitignored). */
const GENERATED = new Set(['lib/console/console.js']);
const LIMITS = { lib: 400, functions: 500, infra: 500, ops: 500, dev: 500, integrators: 500, '.ci': 500 };

const sourcesOf = (folder: string) =>
  readdirSync(resolve(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter(
      (entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.parentPath.includes('node_modules'),
    )
    .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length + 1))
    .filter((file) => !GENERATED.has(file));

it('keeps every source file of lib/ within 400 lines, and of the other code folders within 500', () => {
  const over = Object.entries(LIMITS).flatMap(([folder, limit]) =>
    sourcesOf(folder)
      .map((file) => ({ file, lines: readFileSync(resolve(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > limit)
      .map(({ file, lines }) => `${file}: ${lines} lines, above ${limit}`),
  );
  expect(over).toEqual([]);
});
