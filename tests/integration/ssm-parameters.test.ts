/**
 * The SSM parameter store the admin CLI writes key material with (ops/admin/keys.ts over
 * lib/aws/ssm.ts), through the real AWS SDK client, against a stand-in for SSM on loopback:
 * what each PutParameter asks SSM to do, as it goes over the wire, and how long a read waits
 * for an SSM that does not answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_ATTEMPTS } from '../../lib/aws/requests.ts';
import { readParameter } from '../../lib/aws/ssm.ts';
import { createSsmParameterStore } from '../../ops/admin/keys-store.ts';

/** A parameter the stand-in never answers for, as an SSM that hangs. */
const SILENT_PARAMETER = '/parcel-auth/teststage/silent';

const KMS_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

interface Received {
  readonly target: string | undefined;
  readonly body: Record<string, unknown>;
}

let server: Server;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = request.headers['x-amz-target'];
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      received.push({ target: Array.isArray(target) ? target[0] : target, body });
      if (body.Name === SILENT_PARAMETER) return; // never answered
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ Version: 1, Tier: 'Standard' }));
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  vi.stubEnv('AWS_ENDPOINT_URL_SSM', `http://127.0.0.1:${port}`);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent');
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});

beforeEach(() => {
  received.length = 0;
});

describe('SSM parameter store', () => {
  // A region of its own: lib/aws/ssm.ts keeps one client per region, built with this env.
  const store = () => createSsmParameterStore('eu-south-2');

  it('writes a secure value as a SecureString with the stage’s KMS key', async () => {
    await store().put('/parcel-auth/teststage/signing-keyring', '{"keyring":1}', {
      secure: true,
      overwrite: false,
      kmsKeyId: KMS_KEY,
    });

    expect(received).toEqual([
      {
        target: 'AmazonSSM.PutParameter',
        body: {
          Name: '/parcel-auth/teststage/signing-keyring',
          Value: '{"keyring":1}',
          Type: 'SecureString',
          Overwrite: false,
          KeyId: KMS_KEY,
        },
      },
    ]);
  });

  it('leaves a SecureString to SSM’s own key when the stage names none', async () => {
    await store().put('/parcel-auth/teststage/signing-keyring', '{}', { secure: true, overwrite: true });

    expect(received.map(({ body }) => body)).toEqual([
      { Name: '/parcel-auth/teststage/signing-keyring', Value: '{}', Type: 'SecureString', Overwrite: true },
    ]);
  });

  it('never gives a plain String a key, even when asked', async () => {
    await store().put('/parcel-auth/teststage/jwks', '{"keys":[]}', {
      secure: false,
      overwrite: true,
      kmsKeyId: KMS_KEY,
    });

    expect(received.map(({ body }) => body)).toEqual([
      { Name: '/parcel-auth/teststage/jwks', Value: '{"keys":[]}', Type: 'String', Overwrite: true },
    ]);
  });

  it('gives up on an SSM that never answers after three timed-out attempts', async () => {
    // Act
    const failure = await readParameter('eu-south-1', SILENT_PARAMETER).catch((error: unknown) => error);

    // Assert
    expect(failure).toMatchObject({ name: 'TimeoutError' });
    expect(received.map(({ target }) => target)).toEqual(Array(MAX_ATTEMPTS).fill('AmazonSSM.GetParameter'));
  }, 15_000);
});
