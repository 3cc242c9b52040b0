/**
 * The local API reference server on its own (the browser test, tests/e2e/api-reference.test.ts,
 * drives the page): the fixed set of paths it serves, the document it serves with the running
 * API as its first server and the demo login as its login example, and everything else refused.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ReferenceServer, startReferenceServer } from '../../dev/local/reference.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const API_ORIGIN = 'http://127.0.0.1:43123';
const DEMO = { username: 'demo', password: 'a-demo-password-of-this-data-dir' };

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, apiOrigin: API_ORIGIN, demo: DEMO });
});
afterAll(() => server?.close());

/** One request with the path exactly as given (fetch would normalise `..` away). */
function get(
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
  to: ReferenceServer = server,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { port } = new URL(to.url);
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => done({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.once('error', fail);
    req.end();
  });
}

describe('the local API reference server', () => {
  it('listens on loopback and serves a page that loads Swagger UI and the document from itself', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

    const page = await get('/');

    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(sources.length).toBeGreaterThan(2);
    for (const source of sources) {
      expect(source, 'no CDN: every asset is relative').not.toMatch(/^(https?:)?\/\//);
      expect((await get(`/${source}`)).status, source).toBe(200);
    }
    expect((await get('/init.js')).body).toContain("url: 'openapi.json'");
  });

  it('serves the Swagger UI bundle of the installed swagger-ui-dist', async () => {
    const bundle = await get('/swagger-ui/swagger-ui-bundle.js');

    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.body).toBe(
      readFileSync(resolve(ROOT, 'node_modules/swagger-ui-dist/swagger-ui-bundle.js'), 'utf8'),
    );
  });

  it("serves docs/openapi.yaml with the running API as its first server, in place of the file's loopback one", async () => {
    const file = parse(readFileSync(resolve(ROOT, 'docs/openapi.yaml'), 'utf8'));

    const served = JSON.parse((await get('/openapi.json')).body);

    expect(served.servers[0].url).toBe(API_ORIGIN);
    expect(served.servers.slice(1)).toEqual(
      file.servers.filter((entry: { url: string }) => !entry.url.startsWith('http://127.0.0.1')),
    );
    expect(served.servers.slice(1).length).toBeGreaterThan(0);
    expect(served.paths).toEqual(file.paths);
    const { requestBodies, ...components } = served.components;
    const { requestBodies: fileBodies, ...fileComponents } = file.components;
    expect(components).toEqual(fileComponents);
    expect(Object.keys(requestBodies)).toEqual(Object.keys(fileBodies));
    expect(requestBodies.RefreshToken).toEqual(fileBodies.RefreshToken);
  });

  it('serves the demo login as the example of the login request body, which the file never holds', async () => {
    const file = parse(readFileSync(resolve(ROOT, 'docs/openapi.yaml'), 'utf8'));
    const fileLogin = file.components.requestBodies.Login;

    const login = JSON.parse((await get('/openapi.json')).body).components.requestBodies.Login;

    expect(login.content['application/json'].example).toEqual(DEMO);
    expect(login.content['application/json'].schema).toEqual(fileLogin.content['application/json'].schema);
    expect(login.description).toBe(fileLogin.description);
    expect(fileLogin.content['application/json'].example.password).not.toBe(DEMO.password);
    // Both login operations take this body, so try-it-out of either sends the demo login.
    for (const operation of [file.paths['/api/v1/login'].post, file.paths['/api/v1/login-extended'].post])
      expect(operation.requestBody).toEqual({ $ref: '#/components/requestBodies/Login' });
  });

  it('serves the file’s own login example when there is no demo login', async () => {
    const plain = await startReferenceServer({ port: 0, apiOrigin: API_ORIGIN, demo: null });
    try {
      const file = parse(readFileSync(resolve(ROOT, 'docs/openapi.yaml'), 'utf8'));

      const served = JSON.parse((await get('/openapi.json', 'GET', {}, plain)).body);

      expect(served.components).toEqual(file.components);
    } finally {
      await plain.close();
    }
  });

  it('answers only requests addressed to 127.0.0.1 or localhost, so a rebound name cannot read the demo login', async () => {
    const { port } = new URL(server.url);

    expect((await get('/openapi.json', 'GET', { host: `localhost:${port}` })).status).toBe(200);
    for (const host of ['attacker.example', `attacker.example:${port}`, '127.0.0.1:1']) {
      const answer = await get('/openapi.json', 'GET', { host });
      expect(answer.status, host).toBe(421);
      expect(answer.body, host).not.toContain(DEMO.password);
    }
  });

  it('serves the oauth2 scheme with a token URL that resolves, against the first server, to the running API’s token endpoint', async () => {
    const served = JSON.parse((await get('/openapi.json')).body);

    // OpenAPI resolves a relative URL of a security scheme against the server, as Swagger UI does.
    const { tokenUrl } = served.components.securitySchemes.oauth2.flows.clientCredentials;
    expect(new URL(tokenUrl, served.servers[0].url).href).toBe(`${API_ORIGIN}/api/v1/oauth/token`);
  });

  it('lets the page call only itself and the API, and run only its own scripts', async () => {
    const policy = String((await get('/')).headers['content-security-policy']);

    expect(policy).toContain(`connect-src 'self' ${API_ORIGIN}`);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("default-src 'none'");
  });

  it('answers 404 for any other path, a climb out of its folder included', async () => {
    for (const path of [
      '/package.json',
      '/swagger-ui/index.html',
      '/swagger-ui/../package.json',
      '/swagger-ui/%2e%2e/%2e%2e/package.json',
      '/openapi.yaml',
      '//etc/passwd',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toBe('Not found\n');
    }
  });

  it('refuses methods other than GET and HEAD with 405', async () => {
    const answer = await get('/', 'POST');

    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });
});
