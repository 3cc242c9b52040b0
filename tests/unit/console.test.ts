/**
 * functions/console.ts, imported as the other handlers' tests import theirs: the page and its two
 * assets read from lib/console/, their headers, ETags and the 404 of any other name; the script
 * as esbuild bundles it from lib/console/'s TypeScript, built here first as the console
 * function's bundle builds it. The page in a browser, through the local stack:
 * tests/e2e/console.test.ts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { handler as consoleHandler } from '../../functions/console.ts';
import { buildConsoleScript } from '../../infra/console-script.ts';
import { AUDIT_EVENT_TYPES } from '../../lib/audit/audit.ts';
import { SECURITY_HEADERS } from '../../lib/console/serve.ts';
import { AppError } from '../../lib/errors.ts';
import { problemResponse } from '../../lib/http/problems.ts';
import { ADMIN_SCOPE, SELF_SERVICE_CLIENT_SCOPES } from '../../lib/scopes.ts';

let handler: typeof consoleHandler;
/** The script as this run built it. */
let built: string;

beforeAll(async () => {
  built = await buildConsoleScript();
  // The handler reads its files at import: after the build.
  ({ handler } = await import('../../functions/console.ts'));
});

const get = (asset?: string, headers: Record<string, string> = {}) =>
  handler({ pathParameters: asset === undefined ? null : { asset }, headers });
const source = (file: string) => readFileSync(new URL(`../../lib/console/${file}`, import.meta.url), 'utf8');
const problemType = (code: 'RECENT_LOGIN_REQUIRED' | 'INSUFFICIENT_SCOPE') =>
  JSON.parse(problemResponse(new AppError(code)).body).type;

describe('GET /console', () => {
  it('answers the page with the CSP and the other security headers, revalidated on every load', async () => {
    const answer = await get();

    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Strict-Transport-Security': 'max-age=31536000',
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
    });
    expect(answer.headers?.['Content-Security-Policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(answer.body).toContain('<script type="module" src="console/console.js"></script>');
    expect(answer.body).toContain('<link rel="stylesheet" href="console/console.css">');
  });

  it('offers exactly the scopes an administrator may give a client, never customer:admin', async () => {
    const { body } = await get();

    const offered = [...body.matchAll(/name="scope" value="([^"]+)"/g)].map((match) => match[1]);
    expect(offered).toEqual(SELF_SERVICE_CLIENT_SCOPES);
    expect(body).not.toContain('customer:admin');
    expect(body).not.toContain('<!-- scope choices -->');
  });

  it('answers as its script the bundle just built from the TypeScript, and its stylesheet as the file holds it', async () => {
    const script = await get('console.js');
    const stylesheet = await get('console.css');

    expect(script).toMatchObject({ statusCode: 200, body: built });
    expect(source('console.js')).toBe(built);
    expect(script.headers?.['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(stylesheet).toMatchObject({ statusCode: 200, body: source('console.css') });
    expect(stylesheet.headers?.['Content-Type']).toBe('text/css; charset=utf-8');
    expect(stylesheet.headers).toMatchObject(SECURITY_HEADERS);
  });

  it('bundles the script into one module that imports nothing, with the server’s event types and problem types', () => {
    // One file for `script-src 'self'`: no import of another module, static or dynamic.
    expect(built).not.toMatch(/\bimport\b|\bexport\b/);
    // A label for each of lib/audit/audit.ts's event types (tsc holds the table to the list).
    for (const type of AUDIT_EVENT_TYPES) expect(built, type).toContain(`"${type}":`);
    // The problem types the page acts on, as lib/http/problems.ts answers them.
    expect(built).toContain(`"${problemType('RECENT_LOGIN_REQUIRED')}"`);
    expect(built).toContain(`"${problemType('INSUFFICIENT_SCOPE')}"`);
    // The scope whose want means "not an administrator", as lib/scopes.ts names it.
    expect(built).toContain(`"${ADMIN_SCOPE}"`);
  });

  it('answers 304 with no body to the current ETag, alone, weak or in a list, and 200 to another', async () => {
    const { headers } = await get('console.js');
    const etag = String(headers?.ETag);

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await get('console.js', { 'If-None-Match': ifNoneMatch });
      expect(again, ifNoneMatch).toMatchObject({ statusCode: 304, body: '' });
      expect(again.headers?.ETag, ifNoneMatch).toBe(etag);
    }
    expect((await get('console.js', { 'if-none-match': '"other"' })).statusCode).toBe(200);
    expect((await get('console.css', { 'if-none-match': etag })).statusCode).toBe(200);
  });

  it('answers any other name 404 problem+json, with the security headers', async () => {
    for (const name of ['console.html', 'serve.ts', '../serve.ts', 'app.js', '']) {
      const answer = await get(name);
      expect(answer.statusCode, name).toBe(404);
      expect(answer.headers, name).toMatchObject({
        ...SECURITY_HEADERS,
        'Content-Type': 'application/problem+json',
      });
      expect(JSON.parse(answer.body), name).toEqual({
        type: 'urn:parcel-auth:problem:not-found',
        title: 'Not found',
        status: 404,
        detail: 'The console has no such file.',
      });
    }
  });
});
