/**
 * Key material of the local stage: the private keyring and the public key set, as files
 * under DATA_DIR/keys (the keyring readable by the owner only), created on first start.
 * `npm run admin -- keys rotate` rotates them; the running stack picks the change up
 * within its KEY_RELOAD_INTERVAL.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeyring } from '../../lib/tokens/keys.ts';
import { generateKeyring, publishedKeys } from './keyring.ts';

export interface LocalKeyFiles {
  readonly keyringFile: string;
  readonly jwksFile: string;
}

export const localKeyFiles = (dataDir: string): LocalKeyFiles => ({
  keyringFile: join(dataDir, 'keys', 'signing-keyring.json'),
  jwksFile: join(dataDir, 'keys', 'jwks.json'),
});

const readKeyring = (path: string) =>
  readFile(path, 'utf8').then(
    (text) => parseKeyring(text),
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    },
  );

/** Makes the local keyring if there is none; returns the files and whether they are new. */
export async function ensureLocalKeys(dataDir: string): Promise<LocalKeyFiles & { created: boolean }> {
  const files = localKeyFiles(dataDir);
  const existing = await readKeyring(files.keyringFile);
  if (existing?.counterSecret === undefined && existing !== undefined) {
    // A keyring from before the login counters were keyed: give it its secret.
    const { counterSecret } = await generateKeyring(new Date());
    await writeFile(files.keyringFile, `${JSON.stringify({ ...existing, counterSecret })}\n`, {
      mode: 0o600,
    });
  }
  if (existing !== undefined) return { ...files, created: false };
  await mkdir(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
  const keyring = await generateKeyring(new Date());
  // The public set first: a key is published before anything signs with it.
  await writeFile(files.jwksFile, `${JSON.stringify(publishedKeys(keyring), null, 2)}\n`, { mode: 0o644 });
  await writeFile(files.keyringFile, `${JSON.stringify(keyring)}\n`, { mode: 0o600, flag: 'wx' });
  return { ...files, created: true };
}
