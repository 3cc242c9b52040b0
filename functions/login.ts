import { LoginRequestSchema, login, toLoginResponse } from '../lib/auth/login.ts';
import { readLoginConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { ok } from '../lib/http/responses.ts';
import { loginDeps } from '../lib/wiring/sessions.ts';

const deps = await loginDeps(readLoginConfig());

/** POST /api/v1/login */
export const handler = endpoint({
  body: LoginRequestSchema,
  metrics: deps.metrics,
  limits: deps.limits,
  handle: async ({ body, sourceIp }) => {
    const result = await login(deps, { ...body, sourceIp });
    return ok(toLoginResponse(result), result.quota);
  },
});
