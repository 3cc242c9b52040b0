import { readLogoutConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { noContent } from '../lib/http/responses.ts';
import { endSession, RefreshRequestSchema } from '../lib/sessions/sessions.ts';
import { logoutDeps } from '../lib/wiring/sessions.ts';

const deps = await logoutDeps(readLogoutConfig());

/** POST /api/v1/logout */
export const handler = endpoint({
  body: RefreshRequestSchema,
  metrics: deps.metrics,
  handle: async ({ body }) => {
    await endSession(deps, body.refreshToken);
    return noContent();
  },
});
