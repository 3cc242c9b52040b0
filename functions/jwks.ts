import { readJwksConfig } from '../lib/config.ts';
import { cacheable, endpoint } from '../lib/http.ts';
import { jwksDeps } from '../lib/wiring.ts';

const config = readJwksConfig();
const deps = await jwksDeps(config);
/** Clients may cache the key set as long as this function does: a rotation is published earlier. */
const maxAgeSeconds = Math.floor(config.keys.reloadMs / 1000);

/** GET /.well-known/jwks.json */
export const handler = endpoint({
  handle: async () => cacheable(await deps.jwks(), maxAgeSeconds),
});
