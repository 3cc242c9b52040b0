/**
 * The local stack's stand-in for API Gateway's gateway responses, which serverless-offline
 * does not emulate: a small HTTP server on the API's port that passes every request to
 * serverless-offline on an internal port and every answer back, except serverless-offline's
 * own error answers, which it replaces by the gateway response of infra/gateway-responses.yml
 * that API Gateway gives on AWS. A function's answer is passed on as it is. Like API Gateway,
 * it forwards its own Host and X-Forwarded-Proto, never a caller's.
 * docs/local-stack.md says what still differs.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as v from 'valibot';
import { type GatewayError, type GatewayResponses, readGatewayResponses } from './gateway-responses.ts';

/** How serverless-offline (hapi's Boom) answers its own errors; its unknown-route 404 has no message. */
const OfflineErrorSchema = v.object({
  statusCode: v.number(),
  error: v.string(),
  message: v.optional(v.string()),
});
/** serverless-offline's 502 when a function's answer is not one it can pass on. */
const FailedFunctionSchema = v.object({ errorType: v.string(), errorMessage: v.string() });

/** serverless-offline's words for a Deny policy, and for a path or method no route has. */
const DENIED = 'User is not authorized to access this resource';
const NO_ROUTE = 'Serverless-offline: route not found.';

const isProblem = (contentType: string | undefined) =>
  contentType?.toLowerCase().startsWith('application/problem+json') === true;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The error API Gateway would have answered where serverless-offline answered `status` and
 * `body` itself, or undefined for any other answer. serverless-offline's own errors are JSON in
 * Boom's shape `{"statusCode":N,"error":…,"message":…}`, and a function that threw or timed
 * out is a 502 or 504 with an empty body or the function's `errorType`. The functions' errors
 * are problem+json, and the token endpoint's RFC 6749 errors have no `statusCode`.
 */
export function offlineError(
  status: number,
  contentType: string | undefined,
  body: string,
): GatewayError | undefined {
  if (status < 400 || isProblem(contentType)) return undefined;
  const json = parseJson(body);
  const own = v.safeParse(OfflineErrorSchema, json);
  if (own.success && own.output.statusCode === status) {
    const { error, message } = own.output;
    // A REST API answers a path or method it has no route for 403, not 404 (with an
    // Authorization header that is no AWS signature, AWS's message is about that header).
    if (status === 404 && error === NO_ROUTE)
      return { type: 'MISSING_AUTHENTICATION_TOKEN', status: 403, message: 'Missing Authentication Token' };
    if (status === 401) return { type: 'UNAUTHORIZED', status, message: 'Unauthorized' };
    if (status === 403 && message === DENIED) return { type: 'ACCESS_DENIED', status, message };
    if (status < 500) return { type: 'DEFAULT_4XX', status, message: message ?? error };
    return { type: 'DEFAULT_5XX', status, message: 'Internal server error' };
  }
  if ((status === 502 || status === 504) && (body === '' || v.is(FailedFunctionSchema, json)))
    return { type: 'DEFAULT_5XX', status, message: 'Internal server error' };
  return undefined;
}

/** The answer when serverless-offline cannot be reached (not started yet, or gone). */
const UNREACHABLE: GatewayError = { type: 'DEFAULT_5XX', status: 502, message: 'Internal server error' };

/** Headers of one connection rather than of the message (RFC 9110 7.6.1); Expect is answered here. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** `rawHeaders` (name, value, name, value, …: repeated headers kept, as the authorizer needs) filtered. */
function rawHeaders(raw: readonly string[], keep: (name: string) => boolean): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const [name = '', value = ''] = raw.slice(index, index + 2);
    if (keep(name.toLowerCase())) kept.push(name, value);
  }
  return kept;
}
const endToEnd = (name: string) => !HOP_BY_HOP.has(name);
/**
 * A caller's headers the front drops: Host (but for its other name) and X-Forwarded-Proto it
 * sets itself, as API Gateway does; Accept-Encoding because API Gateway compresses nothing unless the API says so (this one
 * does not), and serverless-offline gzips an answer past 1 KB (its unknown-route 404 lists every
 * route), which the front could then not read to replace.
 */
const OWN = new Set(['host', 'x-forwarded-proto', 'accept-encoding']);
/** What a replaced answer keeps of serverless-offline's: its CORS headers (docs/local-stack.md). */
const cors = (name: string) => name.startsWith('access-control-') || name === 'vary';

/** The caller's IPv4 loopback address (the front listens on 127.0.0.1 only), IPv4-mapped or not. */
const callerAddress = (req: IncomingMessage) => req.socket.remoteAddress?.replace(/^::ffff:/, '');

export interface GatewayFront {
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` in front of serverless-offline's HTTP server on 127.0.0.1:`upstreamPort`. */
export async function startGatewayFront(options: {
  port: number;
  upstreamPort: number;
  responses?: GatewayResponses;
}): Promise<GatewayFront> {
  const responses = options.responses ?? readGatewayResponses();
  const replace = (res: ServerResponse, error: GatewayError, kept: readonly string[]) => {
    const answer = responses(error);
    const length = ['Content-Length', String(Buffer.byteLength(answer.body))];
    res.writeHead(answer.status, [...Object.entries(answer.headers).flat(), ...length, ...kept]);
    res.end(answer.body);
  };
  const relay = (answer: IncomingMessage, res: ServerResponse) => {
    const status = answer.statusCode ?? 502;
    const headers = rawHeaders(answer.rawHeaders, endToEnd);
    if (status < 400 || isProblem(answer.headers['content-type'])) {
      res.writeHead(status, headers);
      answer.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.once('end', () => {
      const body = Buffer.concat(chunks);
      const error = offlineError(status, answer.headers['content-type'], body.toString('utf8'));
      if (error !== undefined) {
        replace(res, error, rawHeaders(answer.rawHeaders, cors));
      } else {
        res.writeHead(status, headers);
        res.end(body);
      }
    });
  };

  let ownHost = `127.0.0.1:${options.port}`;
  // Its two names, as API Gateway answers on its execute-api domain and a custom domain: the
  // address, and `localhost`, the one WebAuthn takes for a relying party (the console's passkeys).
  const ownName = (host: string | undefined) =>
    host !== undefined && host === ownHost.replace(/^127\.0\.0\.1:/, 'localhost:') ? host : ownHost;
  const server = createServer((req, res) => {
    // One connection per request: no kept-alive socket that serverless-offline may close
    // just as a request is sent on it.
    const upstream = request(
      {
        host: '127.0.0.1',
        port: options.upstreamPort,
        method: req.method,
        path: req.url,
        // API Gateway answers only on its own domain and sets X-Forwarded-Proto itself; the
        // front does the same, so what names our URLs (the OAuth metadata) is the stack's own.
        headers: [
          ...rawHeaders(req.rawHeaders, (name) => endToEnd(name) && !OWN.has(name)),
          ...['Host', ownName(req.headers.host), 'X-Forwarded-Proto', 'http'],
        ],
        agent: false,
        // From the caller's own address (every 127.x address is this machine's): serverless-offline
        // gives the functions its peer's address as sourceIp, as API Gateway gives the caller's.
        localAddress: callerAddress(req),
      },
      (answer) => {
        answer.once('error', () => res.destroy());
        relay(answer, res);
      },
    );
    upstream.once('error', () => (res.headersSent ? res.destroy() : replace(res, UNREACHABLE, [])));
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen({ port: options.port, host: '127.0.0.1', exclusive: true }, () => listening());
  });
  ownHost = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}
