/**
 * The deployed artifacts: `serverless package --stage prod` (offline, no AWS credentials,
 * as tests/e2e/package.test.ts runs it), then per function the zip's size and the raw and
 * gzip size of the bundled .mjs inside it. The zip is read with node:zlib alone.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync, inflateRawSync } from 'node:zlib';
import { build } from 'esbuild';
import { parse } from 'yaml';
import type { Bundle, FloorBundle } from './results.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The files of a zip archive, by name, uncompressed. */
export function unzip(archive: Buffer): Map<string, Buffer> {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive');
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error('bad zip central directory');
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localHeader = archive.readUInt32LE(at + 42);
    const name = archive.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/')) continue;
    const dataStart =
      localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28);
    const data = archive.subarray(dataStart, dataStart + compressedSize);
    if (method !== 0 && method !== 8) throw new Error(`${name}: unsupported zip method ${method}`);
    files.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
  }
  return files;
}

/** The esbuild options serverless.yml sets that shape a bundle (not serverless-esbuild's own). */
const BUNDLE_OPTIONS = [
  'bundle',
  'minify',
  'format',
  'platform',
  'target',
  'mainFields',
  'banner',
  'legalComments',
  'sourcemap',
] as const;

/** serverless.yml's esbuild options, as serverless-esbuild passes them to esbuild. */
export async function serverlessEsbuildOptions(): Promise<Parameters<typeof build>[0]> {
  const configured: Record<string, unknown> = parse(await readFile(join(ROOT, 'serverless.yml'), 'utf8'))
    .custom.esbuild;
  return Object.fromEntries(BUNDLE_OPTIONS.map((name) => [name, configured[name]]));
}

/** The authorizer's floors (dev/bench/floors/authorizer.ts), as the cold-start part names its variants. */
export const AUTHORIZER_FLOORS = [
  { variant: 'floor: jose + GetItem', file: 'authorizer-floor.mjs', ssm: false, logs: false },
  { variant: 'floor: jose + GetItem + SSM', file: 'authorizer-floor-ssm.mjs', ssm: true, logs: false },
  {
    variant: 'floor: jose + GetItem + SSM + logs and metrics',
    file: 'authorizer-floor-logged.mjs',
    ssm: true,
    logs: true,
  },
] as const;

/**
 * Builds the authorizer's floors into `dir` with serverless.yml's esbuild options, as
 * `serverless package` builds the authorizer, and sizes them as measureBundles() sizes it.
 */
export async function buildAuthorizerFloors(dir: string): Promise<FloorBundle[]> {
  const options = await serverlessEsbuildOptions();
  const floors: FloorBundle[] = [];
  for (const floor of AUTHORIZER_FLOORS) {
    const outfile = join(dir, floor.file);
    await build({
      ...options,
      entryPoints: [join(ROOT, 'dev/bench/floors/authorizer.ts')],
      define: {
        'process.env.FLOOR_SSM': JSON.stringify(String(floor.ssm)),
        'process.env.FLOOR_LOGS': JSON.stringify(String(floor.logs)),
      },
      outfile,
      logLevel: 'error',
    });
    const code = await readFile(outfile);
    floors.push({
      function: 'authorizer',
      floor: floor.variant,
      rawBytes: code.length,
      gzipBytes: gzipSync(code).length,
    });
  }
  return floors;
}

/**
 * The deployed module of `fn` that measureBundles() unpacked into `keepIn`, its packaged files
 * beside it as Lambda lays them out (the console reads its page and assets from there).
 */
export async function packagedModule(keepIn: string, fn: string): Promise<string> {
  const modules = (await readdir(join(keepIn, fn), { recursive: true })).filter((file) =>
    file.endsWith('.mjs'),
  );
  if (modules.length !== 1 || modules[0] === undefined)
    throw new Error(`${fn}: expected one .mjs in its package, found ${modules.join(', ')}`);
  return join(keepIn, fn, modules[0]);
}

/** `keepIn`: a directory where each function's package is unpacked, as `<function>/` (packagedModule()). */
export async function measureBundles(keepIn?: string): Promise<Bundle[]> {
  const serverless = createRequire(import.meta.url).resolve('serverless/bin/serverless.js');
  const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-bench-package-'));
  const workFolder = `.esbuild/bench-${process.pid}`;
  // No credentials anywhere: packaging must not need an AWS account.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  try {
    await promisify(execFile)(
      process.execPath,
      [serverless, 'package', '--stage', 'prod', '--package', dir],
      {
        cwd: ROOT,
        env: {
          ...env,
          AWS_CONFIG_FILE: '/nonexistent',
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
          ESBUILD_WORK_FOLDER: workFolder,
        },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const zips = (await readdir(dir)).filter((name) => name.endsWith('.zip')).sort();
    const bundles: Bundle[] = [];
    for (const zip of zips) {
      const archive = await readFile(join(dir, zip));
      const files = unzip(archive);
      const entries = [...files].filter(([name]) => name.endsWith('.mjs'));
      if (entries.length !== 1 || entries[0] === undefined) {
        throw new Error(`${zip}: expected one .mjs, found ${entries.map(([name]) => name).join(', ')}`);
      }
      const [entry, code] = entries[0];
      const name = zip.slice(0, -'.zip'.length);
      if (keepIn !== undefined) {
        for (const [path, data] of files) {
          if (path.endsWith('/')) continue;
          if (path.split('/').includes('..')) throw new Error(`${zip}: ${path} is outside the package`);
          await mkdir(dirname(join(keepIn, name, path)), { recursive: true });
          await writeFile(join(keepIn, name, path), data);
        }
      }
      bundles.push({
        function: name,
        zipBytes: archive.length,
        entry,
        rawBytes: code.length,
        gzipBytes: gzipSync(code).length,
      });
    }
    return bundles;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(join(ROOT, workFolder), { recursive: true, force: true });
  }
}
