/**
 * docs/layout.md's map against lib/: every folder and file of lib/ is named in it, under its
 * folder, and nothing it names under lib/ is missing from the tree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const doc = readFileSync(resolve(ROOT, 'docs/layout.md'), 'utf8');
const map = /```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';

/** The map's lib/ part: each entry (a top-level file or a folder) with the text that describes it. */
function libEntries(): Map<string, string> {
  const lines = map.split('\n');
  const start = lines.findIndex((line) => /^lib\/(\s|$)/.test(line));
  const entries = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break; // the next top-level folder
    const entry = /^ {2}(\S+)\s/.exec(line)?.[1];
    if (entry !== undefined) {
      current = entry;
      entries.set(entry, line.slice(line.indexOf(entry) + entry.length));
    } else if (current !== undefined) {
      entries.set(current, `${entries.get(current)} ${line.trim()}`);
    }
  }
  return entries;
}

const tree = readdirSync(resolve(ROOT, 'lib'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => resolve(entry.parentPath, entry.name).slice(resolve(ROOT, 'lib').length + 1));

/** `name` as a whole file name: not the tail of `bulk-dynamodb.ts` when looking for `dynamodb.ts`. */
const named = (name: string) => new RegExp(`(?<![\\w-])${name.replaceAll('.', '\\.')}(?![\\w-])`);

describe('docs/layout.md', () => {
  const entries = libEntries();

  it('maps lib/', () => {
    expect(map).toMatch(/\nlib\/\s/);
    expect(entries.size).toBeGreaterThan(5);
  });

  it('names every file of lib/, a nested one in its folder’s entry', () => {
    for (const file of tree) {
      const [folder, name] = file.includes('/') ? file.split('/') : [undefined, file];
      if (folder === undefined) expect(entries.has(name ?? ''), `lib/${file}`).toBe(true);
      else expect(entries.get(`${folder}/`) ?? '', `lib/${file}`).toMatch(named(name ?? ''));
    }
  });

  it('names nothing under lib/ that does not exist', () => {
    for (const [entry, text] of entries) {
      if (!entry.endsWith('/')) {
        expect(tree, `lib/${entry}`).toContain(entry);
        continue;
      }
      for (const name of text.match(/[\w-]+\.ts\b/g) ?? [])
        expect(tree, `lib/${entry}${name}`).toContain(`${entry}${name}`);
    }
  });
});
