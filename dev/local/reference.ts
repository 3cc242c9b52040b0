/**
 * The local stack's API reference page: docs/openapi.yaml rendered by Swagger UI
 * (swagger-ui-dist, served from node_modules: no CDN, nothing fetched from outside), with the
 * running API as the document's first server, so an integrator can log in with the demo user
 * and Authorize with the access token, or Authorize as an API client with its id and secret
 * (the oauth2 scheme, whose token URL resolves against that server), and call a protected
 * route from the page. The login example is the demo login, so try-it-out logs in as it
 * stands; the committed document never holds that password, which is made per data directory.
 *
 * A small node:http server on 127.0.0.1 that `npm start` starts and stops. It serves a fixed
 * set of paths and nothing else: no file is looked up from the request's path, and it answers
 * only requests addressed to 127.0.0.1 or localhost by their Host. The page's
 * requests to the API are cross-origin (another port); serverless-offline answers them with
 * the CORS headers of the request's origin, so this needs nothing on the API side.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { DemoCredentials } from './seed.ts';

const SPEC_FILE = resolve(import.meta.dirname, '../../docs/openapi.yaml');
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export interface ReferenceOptions {
  /** Port on 127.0.0.1; 0 for any free one. */
  readonly port: number;
  /** Origin of the running API, e.g. `http://127.0.0.1:3000` (the spec's paths start with /api/v1). */
  readonly apiOrigin: string;
  /** The demo login, the example of the login request body; null or absent: the document's own. */
  readonly demo?: DemoCredentials | null;
}

export interface ReferenceServer {
  /** The page, e.g. `http://127.0.0.1:3001/`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The OpenAPI document as served: `apiOrigin` first in `servers`, replacing the document's
 * loopback entry, and `demo`, if given, as the example of the login request body.
 */
export function localSpec(
  spec: Record<string, unknown>,
  apiOrigin: string,
  demo?: DemoCredentials | null,
): Record<string, unknown> {
  const servers = Array.isArray(spec.servers) ? (spec.servers as { url?: unknown }[]) : [];
  const remote = servers.filter(
    (server) => typeof server.url !== 'string' || !/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(server.url),
  );
  const served = {
    ...spec,
    servers: [{ url: apiOrigin, description: 'This machine: the local stack (npm start)' }, ...remote],
  };
  if (demo === undefined || demo === null) return served;
  const example = { username: demo.username, password: demo.password };
  return { ...served, components: withLoginExample(spec.components, example) };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `components` with `example` as the login request body's; throws if the document has no such body. */
function withLoginExample(components: unknown, example: DemoCredentials): Record<string, unknown> {
  const bodies = isRecord(components) ? components.requestBodies : undefined;
  const login = isRecord(bodies) ? bodies.Login : undefined;
  const content = isRecord(login) ? login.content : undefined;
  const json = isRecord(content) ? content['application/json'] : undefined;
  if (!isRecord(components) || !isRecord(bodies) || !isRecord(login) || !isRecord(content) || !isRecord(json))
    throw new Error('docs/openapi.yaml has no JSON body at components.requestBodies.Login');
  return {
    ...components,
    requestBodies: {
      ...bodies,
      Login: { ...login, content: { ...content, 'application/json': { ...json, example } } },
    },
  };
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>parcel-auth API reference (local stack)</title>
<link rel="stylesheet" href="swagger-ui/swagger-ui.css">
<link rel="icon" type="image/png" href="swagger-ui/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="swagger-ui/swagger-ui-bundle.js"></script>
<script src="init.js"></script>
</body>
</html>
`;

// validatorUrl: null keeps Swagger UI from sending the document to its online validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  displayRequestDuration: true,
});
`;

type Body = () => Promise<string | Buffer>;
const asset = (file: string) => () => readFile(join(SWAGGER_UI, file));

export async function startReferenceServer(options: ReferenceOptions): Promise<ReferenceServer> {
  const routes = new Map<string, { type: string; body: Body }>([
    ['/', { type: 'text/html; charset=utf-8', body: async () => PAGE }],
    ['/init.js', { type: 'text/javascript; charset=utf-8', body: async () => INIT }],
    [
      '/openapi.json',
      {
        type: 'application/json; charset=utf-8',
        // Read on every request, so an edit of docs/openapi.yaml shows on the next reload.
        body: async () =>
          JSON.stringify(
            localSpec(parse(await readFile(SPEC_FILE, 'utf8')), options.apiOrigin, options.demo),
            null,
            2,
          ),
      },
    ],
    ['/swagger-ui/swagger-ui.css', { type: 'text/css; charset=utf-8', body: asset('swagger-ui.css') }],
    [
      '/swagger-ui/swagger-ui-bundle.js',
      { type: 'text/javascript; charset=utf-8', body: asset('swagger-ui-bundle.js') },
    ],
    ['/swagger-ui/favicon-32x32.png', { type: 'image/png', body: asset('favicon-32x32.png') }],
  ]);
  const headers = {
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': [
      "default-src 'none'",
      "script-src 'self'",
      // Swagger UI sets style attributes.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      `connect-src 'self' ${options.apiOrigin}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
  const answer = (response: ServerResponse, status: number, type: string, body: string | Buffer) => {
    response.writeHead(status, {
      ...headers,
      'Content-Type': type,
      'Content-Length': Buffer.byteLength(body),
    });
    response.end(body);
  };

  // The names this server is reached by, once it listens. Any other Host is a page that had its
  // own name resolve to this machine (DNS rebinding), after the demo login the document holds.
  const hosts = new Set<string>();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const route = routes.get(path);
    if (!hosts.has(request.headers.host ?? '')) {
      answer(
        response,
        421,
        'text/plain; charset=utf-8',
        'Misdirected request: use the address npm start printed\n',
      );
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      answer(response, 405, 'text/plain; charset=utf-8', 'Method not allowed\n');
      return;
    }
    if (route === undefined) {
      answer(response, 404, 'text/plain; charset=utf-8', 'Not found\n');
      return;
    }
    route.body().then(
      (body) => answer(response, 200, route.type, body),
      (error: unknown) => {
        console.error(`API reference: ${path}: ${error instanceof Error ? error.message : String(error)}`);
        answer(response, 500, 'text/plain; charset=utf-8', 'The reference page could not read its files\n');
      },
    );
  });
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen({ port: options.port, host: '127.0.0.1', exclusive: true }, () => {
      server.off('error', fail);
      listening();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  hosts.add(`127.0.0.1:${port}`).add(`localhost:${port}`);
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}
