import { readJwksConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { cacheable } from '../lib/http/responses.ts';
import { jwksDeps } from '../lib/wiring/authorizer.ts';

const deps = await jwksDeps(readJwksConfig());

/** GET /.well-known/jwks.json */
export const handler = endpoint({
  handle: async () => {
    const { keys, maxAgeSeconds } = await deps.jwks();
    return cacheable(keys, maxAgeSeconds);
  },
});
