/**
 * The local stack's gateway front (dev/local/gateway.ts) in front of a stand-in for
 * serverless-offline that answers as serverless-offline does, including the failures the
 * real stack cannot be made to give (a function that throws, a timeout, serverless-offline
 * down). The real authorizer's answers through the front: tests/e2e/gateway-responses.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFront, startGatewayFront } from '../../dev/local/gateway.ts';
import { readGatewayResponses } from '../../dev/local/gateway-responses.ts';
import { type StatedAnswer, statedGatewayResponse } from '../support/gateway-responses.ts';
import { freePort } from '../support/ports.ts';

/** What the stand-in answers: status, headers, body. */
interface Canned {
  readonly status: number;
  readonly headers?: Record<string, string | string[]>;
  readonly body: string;
}

const BOOM = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' };
/** serverless-offline's own answers, as it gives them (captured from the local stack). */
const OFFLINE = {
  noToken: {
    status: 401,
    headers: BOOM,
    body: '{"statusCode":401,"error":"Unauthorized","message":"User is not authorized to access this resource"}',
  },
  refused: {
    status: 401,
    headers: BOOM,
    body: '{"statusCode":401,"error":"Unauthorized","message":"Unauthorized"}',
  },
  denied: {
    status: 403,
    headers: BOOM,
    body: '{"statusCode":403,"error":"Forbidden","message":"User is not authorized to access this resource"}',
  },
  noRoute: {
    status: 404,
    headers: {
      ...BOOM,
      vary: 'origin',
      'access-control-expose-headers': 'WWW-Authenticate,Server-Authorization',
    },
    body: '{"currentRoute":"get - /api/v1/nope","error":"Serverless-offline: route not found.","existingRoutes":["post - /api/v1/login"],"statusCode":404}',
  },
  tooLarge: {
    status: 413,
    headers: BOOM,
    body: '{"statusCode":413,"error":"Request Entity Too Large","message":"Payload content length greater than maximum allowed: 10485760"}',
  },
  threw: { status: 502, headers: { 'content-type': 'application/json' }, body: '' },
  timedOut: { status: 504, headers: { 'content-type': 'application/json' }, body: '' },
  unstringifiedBody: {
    status: 502,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: '{"errorMessage":"According to the API Gateway specs, the body content must be stringified.","errorType":"Object","offlineInfo":"…","stackTrace":null}',
  },
} satisfies Record<string, Canned>;

let canned: Canned = OFFLINE.refused;
let received:
  | { headers: IncomingHttpHeaders; rawHeaders: string[]; body: string; remoteAddress: string | undefined }
  | undefined;
let offline: Server;
let front: GatewayFront;
let base: string;
let offlinePort: number;

beforeAll(async () => {
  offlinePort = await freePort();
  offline = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.once('end', () => {
      received = {
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
        remoteAddress: req.socket.remoteAddress,
      };
      res.writeHead(canned.status, canned.headers);
      res.end(canned.body);
    });
  });
  await new Promise<void>((listening) => offline.listen(offlinePort, '127.0.0.1', listening));
  const port = await freePort();
  front = await startGatewayFront({ port, upstreamPort: offlinePort });
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await front?.close();
  await new Promise((closed) => offline?.close(closed));
});

async function call(answer: Canned, init: RequestInit = {}, path = '/api/v1/tracking/1') {
  canned = answer;
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The answer holds every header of `expected`, and exactly its status and body. */
function expectAnswer(answer: Awaited<ReturnType<typeof call>>, expected: StatedAnswer) {
  expect(answer.status).toBe(expected.status);
  expect(answer.body).toBe(expected.body);
  for (const [name, value] of Object.entries(expected.headers))
    expect(answer.headers.get(name), name).toBe(value);
}

describe('the gateway front replaces serverless-offline’s own errors by the gateway response', () => {
  it('a missing token (401, the identity source absent): UNAUTHORIZED', async () => {
    expectAnswer(await call(OFFLINE.noToken), statedGatewayResponse('UNAUTHORIZED', 401, 'Unauthorized'));
  });

  it('the authorizer’s Unauthorized (401): UNAUTHORIZED', async () => {
    expectAnswer(await call(OFFLINE.refused), statedGatewayResponse('UNAUTHORIZED', 401, 'Unauthorized'));
  });

  it('a route the policy does not allow (403): ACCESS_DENIED', async () => {
    expectAnswer(
      await call(OFFLINE.denied),
      statedGatewayResponse('ACCESS_DENIED', 403, 'User is not authorized to access this resource'),
    );
  });

  it('no route for the path or method (404): MISSING_AUTHENTICATION_TOKEN, which the gateway responses make a 404', async () => {
    const answer = await call(OFFLINE.noRoute);
    expectAnswer(
      answer,
      statedGatewayResponse('MISSING_AUTHENTICATION_TOKEN', 403, 'Missing Authentication Token'),
    );
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:parcel-auth:problem:not-found', status: 404 });
  });

  it('another error of its own (413): DEFAULT_4XX with its status and message', async () => {
    expectAnswer(
      await call(OFFLINE.tooLarge),
      statedGatewayResponse(
        'DEFAULT_4XX',
        413,
        'Payload content length greater than maximum allowed: 10485760',
      ),
    );
  });

  it.each([
    ['threw', OFFLINE.threw],
    ['timed out', OFFLINE.timedOut],
    ['answered a body that is no string', OFFLINE.unstringifiedBody],
  ])('a function that %s (502, 504): DEFAULT_5XX, 503 with Retry-After', async (_, answer) => {
    const got = await call(answer);
    expectAnswer(got, statedGatewayResponse('DEFAULT_5XX', answer.status, 'Internal server error'));
    expect(got.status).toBe(503);
    expect(got.headers.get('retry-after')).toBe('1');
  });

  it('keeps the CORS headers serverless-offline adds, so the API reference page can read the answer', async () => {
    const answer = await call({
      ...OFFLINE.refused,
      headers: {
        ...BOOM,
        'access-control-allow-origin': 'http://127.0.0.1:3001',
        'access-control-allow-credentials': 'true',
      },
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:3001');
    expect(answer.headers.get('access-control-allow-credentials')).toBe('true');
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('serverless-offline not listening: DEFAULT_5XX, 503 with Retry-After', async () => {
    const port = await freePort();
    const alone = await startGatewayFront({ port, upstreamPort: await freePort() });
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/login`, { method: 'POST', body: '{}' });
      expectAnswer(
        { status: response.status, headers: response.headers, body: await response.text() },
        statedGatewayResponse('DEFAULT_5XX', 502, 'Internal server error'),
      );
    } finally {
      await alone.close();
    }
  });
});

describe('the gateway front passes every other answer on as it is', () => {
  const functionAnswers: [string, Canned][] = [
    [
      'a function’s problem+json 401',
      {
        status: 401,
        headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
        body: '{"type":"urn:parcel-auth:problem:invalid-credentials","title":"Invalid credentials","status":401}',
      },
    ],
    [
      'a function’s problem+json that looks like serverless-offline’s',
      {
        status: 403,
        headers: { 'content-type': 'application/problem+json' },
        body: '{"statusCode":403,"error":"Forbidden","message":"User is not authorized to access this resource"}',
      },
    ],
    [
      'the token endpoint’s RFC 6749 error, JSON with an error member',
      {
        status: 401,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'www-authenticate': 'Basic realm="parcel-auth", charset="UTF-8"',
        },
        body: '{"error":"invalid_client","error_description":"Client authentication failed."}',
      },
    ],
    [
      'a 200 with two Set-Cookie headers',
      {
        status: 200,
        headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] },
        body: '{"statusCode":200,"error":"none"}',
      },
    ],
    [
      'a function’s 502 with a body of its own',
      { status: 502, headers: { 'content-type': 'text/plain' }, body: 'x' },
    ],
  ];
  it.each(functionAnswers)('%s', async (_, answer) => {
    const got = await call(answer);
    expect(got.status).toBe(answer.status);
    expect(got.body).toBe(answer.body);
    for (const [name, value] of Object.entries(answer.headers ?? {}))
      expect(got.headers.get(name), name).toBe([value].flat().join(', '));
  });

  it('forwards the request as sent: method, path and query, body, and repeated Authorization headers', async () => {
    canned = { status: 204, body: '' };
    const port = new URL(base).port;
    await new Promise<void>((done, fail) => {
      const body = '{"a":1}';
      // fetch joins repeated headers; the authorizer must see two Authorization headers.
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end(
          [
            'POST /api/v1/shipments?x=1 HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            'Authorization: Bearer one',
            'Authorization: Bearer two',
            'Content-Type: application/json',
            `Content-Length: ${body.length}`,
            'Connection: close',
            '',
            body,
          ].join('\r\n'),
        ),
      );
      socket.once('error', fail);
      socket.once('close', () => done());
      socket.resume();
    });
    expect(received?.body).toBe('{"a":1}');
    expect(received?.headers.host).toBe(`127.0.0.1:${port}`);
    const authorization = received?.rawHeaders.filter((_, index, raw) => raw[index - 1] === 'Authorization');
    expect(authorization).toEqual(['Bearer one', 'Bearer two']);
  });
});

describe('the gateway front hands serverless-offline the caller’s own address, as API Gateway gives sourceIp', () => {
  /** A request to the front from `localAddress` (any 127.x address is this machine's). */
  const from = (localAddress: string) =>
    new Promise<void>((done, fail) => {
      canned = { status: 204, body: '' };
      const sent = request(`${base}/api/v1/login`, { method: 'POST', localAddress }, (response) => {
        response.resume();
        response.once('end', () => done());
      });
      sent.once('error', fail);
      sent.end('{}');
    });

  it.each(['127.0.0.2', '127.0.0.3'])(
    'connects to it from %s for a caller at that address',
    async (address) => {
      await from(address);
      expect(received?.remoteAddress).toBe(address);
    },
  );
});

describe('the gateway front stands in for API Gateway’s own domain', () => {
  it('forwards its own Host and X-Forwarded-Proto, whatever the caller sent: documents that name our URLs cannot be steered', async () => {
    canned = { status: 204, body: '' };
    const port = new URL(base).port;
    await new Promise<void>((done, fail) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end(
          [
            'GET /.well-known/oauth-authorization-server HTTP/1.1',
            'Host: attacker.example',
            'X-Forwarded-Proto: https',
            'Connection: close',
            '',
            '',
          ].join('\r\n'),
        ),
      );
      socket.once('error', fail);
      socket.once('close', () => done());
      socket.resume();
    });
    expect(received?.headers.host).toBe(`127.0.0.1:${port}`);
    expect(received?.headers['x-forwarded-proto']).toBe('http');
    expect(received?.rawHeaders.filter((name) => /^(host|x-forwarded-proto)$/i.test(name))).toHaveLength(2);
  });
});

describe('readGatewayResponses', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-auth-gateway-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const file = async (properties: string) => {
    const path = join(dir, `${Math.random()}.yml`);
    await writeFile(
      path,
      `Resources:\n  R:\n    Type: AWS::ApiGateway::GatewayResponse\n    Properties:\n      RestApiId: { Ref: ApiGatewayRestApi }\n${properties}`,
    );
    return path;
  };

  it('refuses a template variable it cannot render, rather than answering it unrendered', async () => {
    const path = await file(
      '      ResponseType: DEFAULT_4XX\n      ResponseTemplates:\n        application/json: \'{"id":"$context.requestId"}\'\n',
    );
    expect(() => readGatewayResponses(path)).toThrow(/variable the local stack does not render/);
  });

  it('refuses a header that is not a static value', async () => {
    const path = await file(
      "      ResponseType: DEFAULT_4XX\n      ResponseParameters:\n        gatewayresponse.header.Access-Control-Allow-Origin: method.request.header.Origin\n      ResponseTemplates:\n        application/json: '{}'\n",
    );
    expect(() => readGatewayResponses(path)).toThrow(/not a static header/);
  });

  it('gives API Gateway’s built-in answer where no gateway response applies', async () => {
    const path = await file(
      "      ResponseType: UNAUTHORIZED\n      ResponseTemplates:\n        application/json: '{}'\n",
    );
    expect(
      readGatewayResponses(path)({ type: 'DEFAULT_5XX', status: 502, message: 'Internal server error' }),
    ).toEqual({
      status: 502,
      headers: { 'Content-Type': 'application/json' },
      body: '{"message":"Internal server error"}',
    });
  });
});
