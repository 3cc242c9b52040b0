import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { authorizerHandler } from '../../lib/http/authorizer-handler.ts';
import { endpoint } from '../../lib/http/endpoint.ts';
import {
  createLogger,
  describeError,
  type LambdaLogger,
  type LogLevel,
  REDACTED,
  redact,
} from '../../lib/log.ts';
import { createEmfMetrics } from '../../lib/metrics/powertools.ts';
import { lambdaContext, loginEvent } from '../fixtures/events.ts';

/** A logger whose lines the test reads, parsed, and as the raw text that would be shipped. */
function capture(level: LogLevel = 'debug'): { log: LambdaLogger; lines: string[]; parsed: () => unknown[] } {
  const lines: string[] = [];
  const log = createLogger(level, (line) => lines.push(line));
  return { log, lines, parsed: () => lines.map((line) => JSON.parse(line)) };
}

let jwt: string;
beforeAll(async () => {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  jwt = await new SignJWT({ sid: 'session-1' })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'rt+jwt' })
    .setSubject('alice')
    .sign(privateKey);
});

describe('log lines', () => {
  it('writes one Powertools JSON line per event, with the service name and the event name', () => {
    const { log, lines, parsed } = capture();
    log.info('refresh refused', { reason: 'invalid token' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(parsed()[0]).toMatchObject({
      level: 'INFO',
      message: 'refresh refused',
      event: 'refresh refused',
      service: 'parcel-auth',
      reason: 'invalid token',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('drops events below its level', () => {
    const { log, parsed } = capture('warn');
    log.debug('a debug event');
    log.info('an info event');
    log.warn('a warning');
    log.error('an error');
    expect(parsed()).toMatchObject([
      { level: 'WARN', event: 'a warning' },
      { level: 'ERROR', event: 'an error' },
    ]);
  });

  it('carries the request id of the invocation of the authorizer’s handler', async () => {
    const { log, parsed } = capture();
    const handler = authorizerHandler({
      logger: log,
      metrics: createEmfMetrics({ stage: 'test', logger: log }),
      handle: async (event: { name: string }) => {
        log.info('handled', { name: event.name });
        return 'done';
      },
    });
    await expect(handler({ name: 'x' }, lambdaContext())).resolves.toBe('done');
    expect(parsed()[0]).toMatchObject({
      event: 'handled',
      function_request_id: lambdaContext().awsRequestId,
      function_name: 'parcel-auth-test',
    });
  });

  it('gives each line of the authorizer’s handler its own invocation’s request id, also after silent ones', async () => {
    const { log, parsed } = capture();
    const handler = authorizerHandler({
      logger: log,
      metrics: createEmfMetrics({ stage: 'test', logger: log }),
      handle: async (event: { speak: boolean }) => {
        if (event.speak) log.info('spoke');
        return 'done';
      },
    });
    const invocation = (id: string) => ({ ...lambdaContext(), awsRequestId: id });
    await handler({ speak: true }, invocation('first'));
    await handler({ speak: false }, invocation('silent'));
    await handler({ speak: true }, invocation('third'));
    expect(parsed()).toMatchObject([{ function_request_id: 'first' }, { function_request_id: 'third' }]);
    expect(parsed()).toHaveLength(2);
  });

  it('reduces an error to name, message, code and cause', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', payload: 'x' });
    expect(describeError(new Error('DEPENDENCY_UNAVAILABLE', { cause }))).toEqual({
      name: 'Error',
      message: 'DEPENDENCY_UNAVAILABLE',
      cause: { name: 'Error', message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' },
    });
  });
});

describe('the redaction safety net', () => {
  it.each([
    'password',
    'newPassword',
    'token',
    'accessToken',
    'refreshToken',
    'authorizationToken',
    'Authorization',
    'authorization',
    'clientSecret',
    'Cookie',
    'privateKey',
    'd',
  ])('replaces the value of a key named %s, at any depth', (key) => {
    const { log, lines, parsed } = capture();
    const secret = 'a-secret-value-1234';
    log.warn('oops', { [key]: secret, nested: { list: [{ [key]: { deeper: secret } }] } });
    expect(lines.join('\n')).not.toContain(secret);
    expect(parsed()[0]).toMatchObject({ [key]: REDACTED, nested: { list: [{ [key]: REDACTED }] } });
  });

  it('replaces a JWT wherever it appears in a string, and keeps the rest of the string', () => {
    const { log, lines, parsed } = capture();
    log.info(`event with ${jwt}`, {
      hint: `presented ${jwt} twice`,
      list: ['x', jwt],
      error: describeError(new Error(`bad token ${jwt}`, { cause: new Error(jwt) })),
    });
    const text = lines.join('\n');
    expect(text).not.toContain(jwt);
    expect(text).not.toContain(jwt.split('.')[1]);
    expect(text).not.toContain(jwt.split('.')[2]);
    expect(parsed()[0]).toMatchObject({
      message: `event with ${REDACTED}`,
      hint: `presented ${REDACTED} twice`,
      list: ['x', REDACTED],
      error: { message: `bad token ${REDACTED}`, cause: { message: REDACTED } },
    });
  });

  it('replaces a JWT inside an Error object logged as is, stack included', () => {
    const { log, lines } = capture();
    log.error('request failed', { error: new Error(`cannot verify ${jwt}`) });
    expect(lines.join('\n')).not.toContain(jwt.split('.')[2]);
    expect(lines.join('\n')).toContain('cannot verify [REDACTED]');
  });

  it('replaces every private member of a JWK, and a Bearer credential or PEM private key in text', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const jwk = await exportJWK(privateKey);
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const { log, lines, parsed } = capture();
    log.error('key material reload failed', {
      keyring: { active: jwk, retired: [jwk] },
      header: 'Bearer not-a-jwt-but-secret',
      detail: `cannot parse ${pem.trim()}`,
    });
    const text = lines.join('\n');
    expect(text).not.toContain(String(jwk.d));
    expect(text).not.toContain('not-a-jwt-but-secret');
    expect(text).not.toContain(pem.split('\n')[1]);
    expect(parsed()[0]).toMatchObject({
      keyring: { active: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: REDACTED } },
      header: `Bearer ${REDACTED}`,
      detail: `cannot parse ${REDACTED}`,
    });
  });

  it('keeps ordinary fields: reason codes, usernames, session ids, counts', () => {
    const fields = { reason: 'invalid token', username: 'alice', sessionId: 'f-1', generation: 3, ok: true };
    expect(Object.entries(fields).map(([key, value]) => redact(key, value))).toEqual(Object.values(fields));
  });

  it('never logs the Lambda event, even when POWERTOOLS_LOGGER_LOG_EVENT asks for it', async () => {
    vi.stubEnv('POWERTOOLS_LOGGER_LOG_EVENT', 'true');
    try {
      const { log, lines, parsed } = capture();
      const authorizer = authorizerHandler({
        logger: log,
        metrics: createEmfMetrics({ stage: 'test', logger: log }),
        handle: async (_event: { authorizationToken: string }) => 'done',
      });
      await authorizer({ authorizationToken: `Bearer ${jwt}` }, lambdaContext());
      const login = endpoint({
        logger: log,
        handle: async () => {
          throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('DynamoDB unreachable') });
        },
      });
      const response = await login(
        loginEvent(JSON.stringify({ username: 'alice', password: 'the-password-1' })),
        lambdaContext(),
      );
      expect(response.statusCode).toBe(503);
      expect(parsed()).toMatchObject([
        { event: 'request failed', function_request_id: lambdaContext().awsRequestId },
      ]);
      expect(lines.join('\n')).not.toContain('the-password-1');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
