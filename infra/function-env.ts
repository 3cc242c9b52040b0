/**
 * The environment serverless.yml gives a function on a stage, resolved here as the Serverless
 * Framework would: `provider.environment` under the function's own `environment` (YAML merge
 * keys included), with `${param:…}` (the stage's block over `default`), `${sls:stage}`,
 * `${self:service}`, `${self:custom.…}` and `${env:NAME, 'default'}` filled in. The tests and
 * the bench run the handlers in this environment, so a setting added to serverless.yml
 * reaches them without a second copy.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Env } from '../lib/config.ts';

const SERVERLESS_FILE = new URL('../serverless.yml', import.meta.url);

interface ServerlessDoc {
  service: string;
  params?: Record<string, Record<string, unknown> | null>;
  provider: { environment?: Record<string, unknown> };
  custom?: Record<string, unknown>;
  functions: Record<string, { environment?: Record<string, unknown> }>;
}

const readDoc = (): ServerlessDoc =>
  parse(readFileSync(SERVERLESS_FILE, 'utf8'), { merge: true, logLevel: 'silent' });

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

const PARAM = /^\$\{param:(\w+)\}$/;

/**
 * Each variable a function takes straight from a stage parameter, and that parameter, as
 * serverless.yml's functions' `environment` maps them: the one declaration of the mapping.
 */
export function variableParameters(): Record<string, string> {
  const doc = readDoc();
  const found: Record<string, string> = {};
  for (const fn of Object.values(doc.functions)) {
    for (const [variable, value] of Object.entries({ ...doc.provider.environment, ...fn.environment })) {
      const param = PARAM.exec(String(value))?.[1];
      if (param === undefined) continue;
      // One variable, one meaning: two functions may not read it from two parameters.
      if (found[variable] !== undefined && found[variable] !== param)
        throw new Error(`serverless.yml gives ${variable} from both ${found[variable]} and ${param}`);
      found[variable] = param;
    }
  }
  return found;
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
  const fn = doc.functions[name];
  if (fn === undefined) throw new Error(`serverless.yml has no function ${name}`);
  const params: Record<string, unknown> = { ...doc.params?.default, ...doc.params?.[stage] };
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
  const merged = { ...doc.provider.environment, ...fn.environment };
  return Object.fromEntries(
    Object.entries(merged).map(([key, value]) => [key, resolve(`${name}.environment.${key}`, value, lookup)]),
  );
}
