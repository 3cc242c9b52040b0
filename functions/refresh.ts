import { readRefreshConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { ok } from '../lib/http/responses.ts';
import { RefreshRequestSchema, refreshSession, toRefreshResponse } from '../lib/sessions/sessions.ts';
import { refreshDeps } from '../lib/wiring/sessions.ts';

const deps = await refreshDeps(readRefreshConfig());

/** POST /api/v1/token/refresh */
export const handler = endpoint({
  body: RefreshRequestSchema,
  metrics: deps.metrics,
  limits: deps.limits,
  handle: async ({ body }) => ok(toRefreshResponse(await refreshSession(deps, body.refreshToken))),
});
