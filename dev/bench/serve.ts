/**
 * A Lambda handler behind a bare node:http server on 127.0.0.1, as a function URL puts one:
 * each request becomes an API Gateway proxy event (its method, path, headers, body and the
 * caller's address) and the handler's answer goes back as it is. The bench times ours and its
 * peer (dev/bench/peer.ts, a Koa app on the same node:http) through the same client and the
 * same loopback, so neither side's figure leaves out the HTTP the other pays.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';
import type { HttpHandler } from './handlers.ts';

export async function serveHandler(handler: HttpHandler) {
  const template = loginEvent(null);
  const context = lambdaContext();
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    for (let i = 0; i < request.rawHeaders.length; i += 2) {
      const name = request.rawHeaders[i] ?? '';
      const value = request.rawHeaders[i + 1] ?? '';
      headers[name] = value;
      multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
    }
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const answer = await handler(
      {
        ...template,
        httpMethod: request.method ?? 'GET',
        path,
        resource: path,
        headers,
        multiValueHeaders,
        body: chunks.length === 0 ? null : Buffer.concat(chunks).toString('utf8'),
        requestContext: {
          ...template.requestContext,
          httpMethod: request.method ?? 'GET',
          resourcePath: path,
          path: `/prod${path}`,
          identity: { ...template.requestContext.identity, sourceIp: request.socket.remoteAddress ?? '' },
        },
      },
      context,
    );
    response.writeHead(answer.statusCode, answer.headers as Record<string, string>);
    response.end(answer.body);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}
