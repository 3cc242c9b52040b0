/** infra/local-prebuilt.cjs: a local stack that serves the bundles of its work folder unbuilt. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

interface Fn {
  handler: string;
  skipEsbuild?: boolean;
  package?: { patterns: string[] };
}
const LocalPrebuilt = createRequire(import.meta.url)('../../infra/local-prebuilt.cjs') as new (
  serverless: unknown,
  options: { stage?: string },
) => { skipBundling(): void };

let serviceDir: string;
beforeEach(async () => {
  serviceDir = await mkdtemp(join(tmpdir(), 'local-prebuilt-'));
  await mkdir(join(serviceDir, '.esbuild/shared/.build/functions'), { recursive: true });
  await writeFile(join(serviceDir, '.esbuild/shared/.build/functions/login.mjs'), '');
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(serviceDir, { recursive: true, force: true });
});

const service = (functions: Record<string, Fn>) => ({
  serviceDir,
  service: {
    provider: { stage: 'local' },
    custom: { esbuild: { outputWorkFolder: '.esbuild/shared' } },
    package: { patterns: ['lib/console/console.html'] },
    functions,
  },
});

describe('the local stack serving prebuilt bundles', () => {
  it('bundles as usual unless LOCAL_PREBUILT_BUNDLES is 1', () => {
    const login: Fn = { handler: 'functions/login.handler' };
    const serverless = service({ login });
    new LocalPrebuilt(serverless, {}).skipBundling();
    expect(login.skipEsbuild).toBeUndefined();
    expect(serverless.service.package.patterns).toEqual(['lib/console/console.html']);
  });

  it('marks every function unbundled and copies no file again when each has its bundle', () => {
    vi.stubEnv('LOCAL_PREBUILT_BUNDLES', '1');
    const login: Fn = { handler: 'functions/login.handler', package: { patterns: ['x'] } };
    const serverless = service({ login });
    new LocalPrebuilt(serverless, {}).skipBundling();
    expect(login).toEqual({
      handler: 'functions/login.handler',
      skipEsbuild: true,
      package: { patterns: [] },
    });
    expect(serverless.service.package.patterns).toEqual([]);
  });

  it('refuses a function without its bundle, naming it', () => {
    vi.stubEnv('LOCAL_PREBUILT_BUNDLES', '1');
    const serverless = service({ refresh: { handler: 'functions/refresh.handler' } });
    expect(() => new LocalPrebuilt(serverless, {}).skipBundling()).toThrow(/refresh has no bundle/);
  });

  it('refuses any stage but local', () => {
    vi.stubEnv('LOCAL_PREBUILT_BUNDLES', '1');
    const serverless = service({ login: { handler: 'functions/login.handler' } });
    expect(() => new LocalPrebuilt(serverless, { stage: 'prod' }).skipBundling()).toThrow(/not prod/);
  });
});
