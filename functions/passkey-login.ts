import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import {
  PasskeyLoginSchema,
  passkeyLogin,
  passkeyLoginOptions,
  toPasskeyLoginResponse,
} from '../lib/auth/passkey-login.ts';
import { readPasskeyLoginConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { ok } from '../lib/http/responses.ts';
import { relyingPartyOf } from '../lib/passkeys/webauthn.ts';
import { passkeyLoginDeps } from '../lib/wiring/passkeys.ts';

const deps = await passkeyLoginDeps(readPasskeyLoginConfig());

/** POST /api/v1/passkey-login/options: a challenge for navigator.credentials.get. */
const options = endpoint({
  metrics: deps.metrics,
  needsBaseUrl: true,
  handle: async ({ baseUrl }) => ok(await passkeyLoginOptions(deps, relyingPartyOf(baseUrl))),
});

/** POST /api/v1/passkey-login: the browser's answer, for a session (docs/administrators.md, "Passkeys"). */
const signIn = endpoint({
  body: PasskeyLoginSchema,
  metrics: deps.metrics,
  needsBaseUrl: true,
  handle: async ({ body, sourceIp, baseUrl }) =>
    ok(toPasskeyLoginResponse(await passkeyLogin(deps, relyingPartyOf(baseUrl), body, sourceIp))),
});

export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  event.resource?.endsWith('/options') === true ? options(event, context) : signIn(event, context);
