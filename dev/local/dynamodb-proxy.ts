/**
 * An HTTP proxy in front of a DynamoDB endpoint that decides, per request, what the client
 * gets: the real answer, an error DynamoDB could send, no answer at all, or no answer to a
 * request DynamoDB did apply. The fault matrix (tests/integration/faults) puts it between the
 * real handlers and a real DynamoDB; the bench counts round trips with it. In front of
 * `npm start`: start it on the stack's DynamoDB and give its endpoint as DYNAMODB_ENDPOINT.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One request as it reached the proxy. */
export interface DynamoRequest {
  /** The operation, from X-Amz-Target: GetItem, UpdateItem, TransactWriteItems, ... */
  readonly action: string;
  /** The request's JSON body, in DynamoDB's wire format. */
  readonly body: Record<string, unknown>;
}

/** A forwarded request answered: its action, and when it reached the proxy and its answer ended (performance.now()). */
export interface Exchange {
  readonly action: string;
  readonly start: number;
  readonly end: number;
}

/** What the client gets for one request. */
export type Verdict =
  /** Forwarded; the client gets DynamoDB's answer. */
  | 'forward'
  /** Not forwarded; 500 InternalServerError, which the SDK retries. */
  | 'error'
  /** Not forwarded; 400 ThrottlingException, which the SDK retries with backoff. */
  | 'throttle'
  /** Not forwarded and never answered: the client waits out its own timeout. */
  | 'hang'
  /** Forwarded, so DynamoDB applies it, and its answer is never delivered. */
  | 'lose-answer';

export interface DynamoProxy {
  readonly endpoint: string;
  /** Decides every request from now on; the default forwards everything. */
  decide(verdict: (request: DynamoRequest) => Verdict): void;
  /** Stops listening and drops every held request. */
  close(): Promise<void>;
}

const ERRORS = {
  error: { status: 500, type: 'InternalServerError', message: 'Internal server error' },
  throttle: {
    status: 400,
    type: 'ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
} as const;

const readBody = async (incoming: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

function answerError(outgoing: ServerResponse, kind: keyof typeof ERRORS) {
  const { status, type, message } = ERRORS[kind];
  outgoing.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-ErrorType': type });
  outgoing.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
}

/**
 * Starts a proxy on a free port of 127.0.0.1 in front of `upstream`; `onExchange` hears of every
 * request whose answer was delivered (the bench counts round trips with it). `answerAfterMs` holds
 * every forwarded answer until that long after its request arrived, so that requests a client sends
 * together overlap at the proxy however fast the DynamoDB behind it answers.
 */
export async function startDynamoProxy(
  upstream: string,
  options: { readonly onExchange?: (exchange: Exchange) => void; readonly answerAfterMs?: number } = {},
): Promise<DynamoProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  let verdictOf: (request: DynamoRequest) => Verdict = () => 'forward';

  const forward = (incoming: IncomingMessage, body: Buffer, onAnswer: (answer: IncomingMessage) => void) => {
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      onAnswer,
    );
    forwarded.once('error', () => incoming.socket.destroy());
    forwarded.end(body);
  };

  const server = createServer(async (incoming, outgoing) => {
    const start = performance.now();
    const body = await readBody(incoming);
    const header = incoming.headers['x-amz-target'];
    const action = (typeof header === 'string' ? header : '').split('.').at(-1) ?? '';
    let parsed: Record<string, unknown> = {};
    try {
      parsed = body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as Record<string, unknown>);
    } catch {
      // Not JSON: forwarded as it is, for DynamoDB to refuse.
    }
    const verdict = verdictOf({ action, body: parsed });
    if (verdict === 'error' || verdict === 'throttle') return answerError(outgoing, verdict);
    if (verdict === 'hang') return;
    forward(incoming, body, (answer) => {
      if (verdict === 'lose-answer') {
        answer.resume();
        return;
      }
      const deliver = () => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
        answer.once('end', () => options.onExchange?.({ action, start, end: performance.now() }));
      };
      const held = start + (options.answerAfterMs ?? 0) - performance.now();
      if (held > 0) setTimeout(deliver, held);
      else deliver();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    decide(verdict) {
      verdictOf = verdict;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
