/**
 * serverless.yml as data, for tests that read it without running the framework (which
 * `serverless package` does, tests/support/template.ts). Values the file takes from a JSON file
 * or a JavaScript module, `${file(./lib/scopes.json):routes.trackShipment.path}` or
 * `${file(./infra/settings.cjs):environment.login}`, are resolved as the framework resolves them;
 * every other variable (`${param:…}`, `${self:…}`, `${sls:…}`) and CloudFormation's short tags
 * are left as written, in the values those files give too.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

const SERVERLESS_FILE = resolve(import.meta.dirname, '../../serverless.yml');

/** `${file(<path>):<a.b.c>}`: a JSON file or a CommonJS module beside serverless.yml, and a dot path into it. */
const FILE_REFERENCE = /\$\{file\(([^)]+\.(?:json|cjs))\):([A-Za-z0-9_.-]+)\}/g;

/** A file's content as the framework reads it: JSON parsed, a module's exports. */
const load = (target: string): unknown =>
  target.endsWith('.json')
    ? JSON.parse(readFileSync(target, 'utf8'))
    : createRequire(import.meta.url)(target);

/**
 * serverless.yml parsed (YAML merge keys `<<` merged, as the framework does), each
 * `${file(<path>):<dot.path>}` replaced by the value it names: the value itself where the
 * reference is the whole string (a number stays a number, an object an object), its text inside a
 * longer string. A reference to a missing file or key throws, naming it.
 */
export function readServerlessYml(file = SERVERLESS_FILE): Record<string, unknown> {
  const base = dirname(file);
  const files = new Map<string, unknown>();
  const lookup = (reference: string, path: string, keys: string) => {
    const target = resolve(base, path);
    if (!files.has(target)) files.set(target, load(target));
    return keys.split('.').reduce<unknown>((node, key) => {
      if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key))
        throw new Error(`${file}: ${reference} names nothing`);
      return Reflect.get(node, key);
    }, files.get(target));
  };
  const resolveNode = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolveNode);
    if (typeof node === 'object' && node !== null)
      return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolveNode(value)]));
    if (typeof node !== 'string') return node;
    const whole = new RegExp(`^${FILE_REFERENCE.source}$`).exec(node);
    if (whole !== null) return lookup(node, whole[1] ?? '', whole[2] ?? '');
    return node.replace(FILE_REFERENCE, (reference, path: string, keys: string) => {
      const value = lookup(reference, path, keys);
      if (typeof value === 'object' && value !== null)
        throw new Error(`${file}: ${reference} names an object inside a string`);
      return String(value);
    });
  };
  // CloudFormation's short tags (!GetAtt, !Join, !Ref) are not YAML's: left unresolved, unlogged.
  return resolveNode(parse(readFileSync(file, 'utf8'), { logLevel: 'error', merge: true })) as Record<
    string,
    unknown
  >;
}
