import { readJwksConfig } from '../lib/config.ts';
import { cacheable, endpoint } from '../lib/http.ts';
import { jwksDeps } from '../lib/wiring.ts';

const deps = await jwksDeps(readJwksConfig());

/** GET /.well-known/jwks.json */
export const handler = endpoint({
  handle: async () => {
    const { keys, maxAgeSeconds } = await deps.jwks();
    return cacheable(keys, maxAgeSeconds);
  },
});
