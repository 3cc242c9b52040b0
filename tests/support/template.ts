/** Runs `serverless package` for a stage, offline and without AWS credentials, and loads its template. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { deployedResources, type Resources, type Template } from './cloudformation.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const serverless = createRequire(import.meta.url).resolve('serverless/bin/serverless.js');

/**
 * A packaged stage: its artifacts' folder, the template's text, the template as written
 * and its deployed resources.
 */
export interface Packaged {
  readonly dir: string;
  readonly templateText: string;
  readonly template: Template;
  readonly resources: Resources;
}

const esbuildFolder = (name: string) => `.esbuild/package-${process.pid}-${name}`;

/**
 * `serverless package --stage <stage>` with `args`. Run packages one after the other: two
 * framework processes started together share ~/.serverless.
 */
export async function packageStage(name: string, stage = 'prod', args: string[] = []): Promise<Packaged> {
  const dir = await mkdtemp(join(tmpdir(), `parcel-auth-package-${name}-`));
  // serverless-esbuild zips each function from a folder under TMPDIR that it fails to remove
  // (a non-recursive remove of a full folder): that TMPDIR is ours, and removed here.
  const scratch = await mkdtemp(join(tmpdir(), `parcel-auth-package-${name}-tmp-`));
  // No credentials anywhere: the package step must not need an AWS account.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_')));
  try {
    await promisify(execFile)(
      process.execPath,
      [serverless, 'package', '--stage', stage, '--package', dir, ...args],
      {
        cwd: ROOT,
        env: {
          ...env,
          AWS_CONFIG_FILE: '/nonexistent',
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
          ESBUILD_WORK_FOLDER: esbuildFolder(name),
          TMPDIR: scratch,
        },
      },
    );
    const templateText = await readFile(join(dir, 'cloudformation-template-update-stack.json'), 'utf8');
    const template = JSON.parse(templateText) as Template;
    return { dir, templateText, template, resources: deployedResources(template) };
  } catch (error) {
    // The caller never gets `dir` to remove.
    await rm(dir, { recursive: true, force: true });
    throw error;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Removes what `packageStage(name)` left: its artifacts' folder (if made) and its esbuild folder. */
export async function removePackage(name: string, dir: string | undefined): Promise<void> {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  await rm(join(ROOT, esbuildFolder(name)), { recursive: true, force: true });
}
