/**
 * The environment serverless.yml gives a function on a stage, resolved here as the Serverless
 * Framework would: infra/settings.cjs's `providerEnvironment` under its `environment.<function>`
 * (both from lib/settings.ts), with `${param:…}` (the stage's block over `default`), `${sls:stage}`,
 * `${self:service}`, `${self:custom.…}` and `${env:NAME, 'default'}` filled in. The tests and the
 * bench run the handlers in this environment, so a setting added to the manifest reaches them
 * without a second copy.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as v from 'valibot';
import { parse } from 'yaml';
import type { Env } from '../lib/config.ts';

const SERVERLESS_FILE = new URL('../serverless.yml', import.meta.url);

const Variables = v.record(v.string(), v.string());
/** What serverless.yml reads from infra/settings.cjs with `${file(./infra/settings.cjs):…}`. */
export const SERVERLESS_SETTINGS = v.parse(
  v.object({
    params: v.record(v.string(), v.record(v.string(), v.union([v.string(), v.number(), v.boolean()]))),
    providerEnvironment: Variables,
    environment: v.record(v.string(), Variables),
  }),
  createRequire(import.meta.url)('./settings.cjs'),
);

interface ServerlessDoc {
  service: string;
  custom?: Record<string, unknown>;
  functions: Record<string, unknown>;
}

const readDoc = (): ServerlessDoc => parse(readFileSync(SERVERLESS_FILE, 'utf8'), { logLevel: 'silent' });

const VARIABLE = /\$\{(\w+):([^,}]+?)(?:\s*,\s*(?:'([^']*)'|"([^"]*)"))?\s*\}/g;

/** `value` with every variable resolved; an unknown one is an error naming `what`. */
function resolve(what: string, value: unknown, lookup: (kind: string, name: string) => unknown): string {
  let text = String(value);
  // Resolved values may hold variables of their own (a param using ${sls:stage}).
  for (let depth = 0; depth < 5 && text.includes('${'); depth += 1) {
    text = text.replace(
      VARIABLE,
      (variable, kind: string, name: string, single?: string, double?: string) => {
        const found = lookup(kind, name.trim());
        if (found !== undefined) return String(found);
        const fallback = single ?? double;
        if (fallback !== undefined) return fallback;
        throw new Error(`${what}: cannot resolve ${variable}`);
      },
    );
  }
  if (text.includes('${')) throw new Error(`${what}: cannot resolve ${text}`);
  return text;
}

/** The names of serverless.yml's functions. */
export const functionNames = (): string[] => Object.keys(readDoc().functions);

/** The environment of function `name` on `stage`; `env` answers `${env:…}` (default: this process's). */
export function functionEnvironment(
  name: string,
  stage: string,
  env: Env = process.env,
): Record<string, string> {
  const doc = readDoc();
  if (!Object.hasOwn(doc.functions, name)) throw new Error(`serverless.yml has no function ${name}`);
  const { params: blocks, providerEnvironment, environment } = SERVERLESS_SETTINGS;
  const params: Record<string, unknown> = { ...blocks.default, ...blocks[stage] };
  const lookup = (kind: string, path: string): unknown => {
    if (kind === 'param') return params[path];
    if (kind === 'sls' && path === 'stage') return stage;
    if (kind === 'env') return env[path];
    if (kind === 'self') {
      return path
        .split('.')
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
    }
    return undefined;
  };
  const merged = { ...providerEnvironment, ...environment[name] };
  return Object.fromEntries(
    Object.entries(merged).map(([key, value]) => [key, resolve(`${name}.environment.${key}`, value, lookup)]),
  );
}
