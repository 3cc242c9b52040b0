/**
 * Every path of this repository that a doc, a comment or a configuration names exists: a
 * moved or deleted file leaves no pointer behind it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TOP = ['functions', 'lib', 'infra', 'ops', 'dev', 'integrators', 'tests', 'docs'];
/** A path from the top of the repository, as prose and comments write them. */
const NAMED = new RegExp(`(?<![\\w./-])((?:${TOP.join('|')})/[\\w./-]*\\w)`, 'g');

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => /\.(ts|cjs|mjs|json|ya?ml|md)$/.test(file) && file !== 'package-lock.json')
  .filter((file) => existsSync(resolve(ROOT, file)));

/**
 * Whether `path` names something here: as it is; a handler (`functions/login.handler`) or an
 * artifact (`functions/login.mjs`) by its source; a source named without its extension.
 */
const exists = (path: string) =>
  [path, path.replace(/\.(handler|mjs)$/, '.ts'), `${path}.ts`].some((candidate) =>
    existsSync(resolve(ROOT, candidate)),
  );

describe('paths named in the repository', () => {
  it('reads the docs, the code and the configuration', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('docs/layout.md');
  });

  it('names only paths that exist', () => {
    const missing = files.flatMap((file) =>
      readFileSync(resolve(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          [...line.matchAll(NAMED)]
            .map((match) => (match[1] ?? '').replace(/\.$/, ''))
            .filter((path) => !path.includes('...') && !exists(path))
            .map((path) => `${file}:${index + 1} ${path}`),
        ),
    );
    expect(missing).toEqual([]);
  });
});
