/**
 * The local stack's ports, checked before `npm start` writes or starts anything, so a clash
 * is one plain line naming the port and its variable, not a stack trace halfway through.
 */
import { createServer } from 'node:net';

export interface NamedPort {
  /** The environment variable that sets it, e.g. `PORT`. */
  readonly variable: string;
  readonly port: number;
}

/** Why `port` cannot be bound on 127.0.0.1 (e.g. `EADDRINUSE`), or undefined if it can. */
export function probePort(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * The first problem with `ports` as one line for the operator, or undefined when every port
 * is distinct and free on 127.0.0.1 right now.
 */
export async function portProblem(ports: readonly NamedPort[]): Promise<string | undefined> {
  for (const [index, { variable, port }] of ports.entries()) {
    const earlier = ports.slice(0, index).find((other) => other.port === port);
    if (earlier !== undefined)
      return `${variable} and ${earlier.variable} are both ${port}; set ${variable} to another port`;
    const reason = await probePort(port);
    if (reason === 'EADDRINUSE')
      return `port ${port} on 127.0.0.1 is in use (${variable}); stop what uses it or set ${variable} to a free port`;
    if (reason !== undefined)
      return `port ${port} on 127.0.0.1 cannot be used (${variable}: ${reason}); set ${variable} to another port`;
  }
  return undefined;
}

/** A port that was free on 127.0.0.1 a moment ago, for a server nobody but the stack connects to. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
