/**
 * Key material of the local stage: a private signing key and the public key set, as files
 * under DATA_DIR/keys (the private one readable by the owner only), created on first start.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSigningJwk, type Jwks, toPublicJwk } from '../../lib/auth/keys.ts';

export interface LocalKeyFiles {
  readonly signingKeyFile: string;
  readonly jwksFile: string;
}

export const localKeyFiles = (dataDir: string): LocalKeyFiles => ({
  signingKeyFile: join(dataDir, 'keys', 'signing-key.json'),
  jwksFile: join(dataDir, 'keys', 'jwks.json'),
});

const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

/** Makes the local key pair if there is none; returns the files and whether they are new. */
export async function ensureLocalKeys(dataDir: string): Promise<LocalKeyFiles & { created: boolean }> {
  const files = localKeyFiles(dataDir);
  if (await exists(files.signingKeyFile)) return { ...files, created: false };
  await mkdir(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
  const jwk = await generateSigningJwk();
  const jwks: Jwks = { keys: [toPublicJwk(jwk)] };
  await writeFile(files.jwksFile, `${JSON.stringify(jwks, null, 2)}\n`, { mode: 0o644 });
  await writeFile(files.signingKeyFile, `${JSON.stringify(jwk)}\n`, { mode: 0o600, flag: 'wx' });
  return { ...files, created: true };
}
