/**
 * The route tables of the README and docs/administrators.md against the code: the README's names
 * every route of serverless.yml (the administrators' API as one row) and its function, and
 * docs/administrators.md's names exactly the routes lib/scopes.json gives `customer:admin`. The
 * docs state no count of routes; these tables are what a reader counts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTECTED_ROUTES } from '../../lib/scopes.ts';
import { readServerlessYml } from '../support/serverless-yml.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(resolve(ROOT, file), 'utf8');

/** The table rows (`| … |` lines) of `file`'s section under `heading`, as their cells. */
function tableRows(file: string, heading: string): string[][] {
  const text = `\n${read(file)}`;
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`${file} has no section ${heading}`);
  const end = text.indexOf('\n## ', start + heading.length + 1);
  return text
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

/** The `METHOD /path` a cell names in code spans. */
const routesIn = (cell: string) =>
  [...cell.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)/g)].map((match) => `${match[1]} ${match[2]}`);

interface HttpRoute {
  readonly route: string;
  readonly handler: string;
}

/** Every http event of serverless.yml, with the source of the function that answers it. */
function serverlessRoutes(): HttpRoute[] {
  const config = readServerlessYml() as {
    functions: Record<string, { handler: string; events?: { http?: { method: string; path: string } }[] }>;
  };
  return Object.values(config.functions).flatMap(({ handler, events = [] }) =>
    events.flatMap(({ http }) =>
      http === undefined
        ? []
        : [
            {
              route: `${http.method.toUpperCase()} /${http.path}`,
              handler: handler.replace(/\.handler$/, '.ts'),
            },
          ],
    ),
  );
}

const CUSTOMER = '/api/v1/customer/';

describe('README.md, the route table', () => {
  const rows =
    read('README.md')
      .split('\n## ')[0]
      ?.split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) =>
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      ) ?? [];
  const named = rows.flatMap(([route = '']) => routesIn(route));

  it('names every route of serverless.yml, with its function', () => {
    const routes = serverlessRoutes();
    expect(routes.length).toBeGreaterThan(10);
    for (const { route, handler } of routes) {
      const [method = '', path = ''] = route.split(' ');
      const row =
        method === 'ANY'
          ? rows.find(([cell = '']) => cell.startsWith('`ANY`'))
          : path.startsWith(CUSTOMER)
            ? rows.find(([cell = '']) => cell.includes(`\`${CUSTOMER}…\``))
            : rows.find(([cell = '']) => routesIn(cell).includes(route));
      expect(row, route).toBeDefined();
      expect(row?.[2], route).toContain(`\`${handler}\``);
    }
  });

  it('names no route serverless.yml does not have', () => {
    const routes = new Set(serverlessRoutes().map(({ route }) => route));
    for (const route of named) expect(routes, route).toContain(route);
  });
});

describe('docs/administrators.md, "The API"', () => {
  const documented = tableRows('docs/administrators.md', '## The API').flatMap(([route = '']) =>
    routesIn(route),
  );
  const declared = Object.values(PROTECTED_ROUTES)
    .filter(({ scope }) => scope === 'customer:admin')
    .map(({ method, path }) => `${method.toUpperCase()} /${path}`);

  it('lists exactly the routes lib/scopes.json gives customer:admin, each once', () => {
    expect(declared.length).toBeGreaterThan(5);
    expect([...documented].sort()).toEqual([...declared].sort());
  });
});
