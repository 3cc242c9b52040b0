/**
 * The authorization endpoint over HTTP: GET opens a request, POST is the page's form. The page's
 * browser is known by an HttpOnly `__Host-` cookie of random bytes whose digest the request is
 * bound to, and a new one from the sign-in on (so a cookie an attacker planted decides nothing);
 * it is SameSite=Lax (sent on the platform's top-level redirect here, never on another site's
 * POST), and a POST must come from this origin (Sec-Fetch-Site, or Origin where the browser
 * sends no Sec-Fetch-Site): another site cannot sign in, approve or deny for a user (CSRF).
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import { AppError, isAppError } from '../errors.ts';
import { publicBaseUrl } from '../http/base-url.ts';
import { header } from '../http/headers.ts';
import { formParameters } from '../http/oauth-form.ts';
import { problemOf } from '../http/problems.ts';
import { relyingPartyOf } from '../passkeys/webauthn.ts';
import { type AuthorizeDeps, digestOf, openAuthorization, type Screen, submitPage } from './authorize.ts';
import { pageHeaders, renderScreen } from './page.ts';
import { PageFormSchema } from './page-sign-in.ts';
import { repeatedParameter } from './request.ts';

/** `__Host-`: set by this host alone, for its every path, over https: no sibling host plants one. */
export const BROWSER_COOKIE = '__Host-parcel-authz';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** The page's cookie from the Cookie header(s), if well-formed. */
function browserCookie(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
): string | undefined {
  const values = [
    ...(event.multiValueHeaders?.cookie ?? event.multiValueHeaders?.Cookie ?? []),
    header(event.headers, 'cookie') ?? '',
  ];
  for (const value of values)
    for (const part of value.split(';')) {
      const [name, cookie] = part.trim().split('=');
      if (name === BROWSER_COOKIE && cookie !== undefined && COOKIE_VALUE.test(cookie)) return cookie;
    }
  return undefined;
}

/** A browser's cookie: `__Host-` needs `Path=/` and Secure (which browsers keep on loopback http too). */
const setCookie = (value: string) =>
  `${BROWSER_COOKIE}=${value}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=600`;

function respond(screen: Screen, extra: Record<string, string> = {}): APIGatewayProxyResult {
  if (screen.page === 'redirect')
    return { statusCode: 303, headers: { ...pageHeaders(), ...extra, Location: screen.location }, body: '' };
  const status = screen.page === 'problem' || screen.page === 'sign-in' ? screen.status : 200;
  const headers: Record<string, string> = { ...pageHeaders(), ...extra };
  if (screen.page === 'consent') {
    // The approval's redirect leaves for the platform's origin, which form-action must allow.
    headers['Content-Security-Policy'] = pageHeaders(screen.redirectOrigin)['Content-Security-Policy'] ?? '';
  }
  if (screen.page === 'sign-in' && screen.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(screen.retryAfterSeconds);
  return { statusCode: status, headers, body: renderScreen(screen) };
}

/** An error as a page: the problem's status and words (lib/http/problems.ts), never a stack trace. */
export function errorPage(error: unknown): APIGatewayProxyResult {
  const known = isAppError(error) ? error : new AppError('INTERNAL', { cause: error });
  const { status, title, detail } = problemOf(known);
  const message =
    known.code === 'INTERNAL'
      ? 'Something went wrong on our side. Try again later.'
      : known.code === 'UNSUPPORTED_MEDIA_TYPE'
        ? 'Send the form as application/x-www-form-urlencoded.'
        : (detail ?? title);
  const response = respond({ page: 'problem', status: 400, message });
  return {
    ...response,
    statusCode: status,
    headers: {
      ...response.headers,
      ...(status === 503 && { 'Retry-After': String(known.retryAfterSeconds ?? 1) }),
    },
  };
}

/**
 * Whether a POST came from a page of this origin, as far as the browser says: Sec-Fetch-Site
 * where it is sent (every current browser), else Origin. An Origin of `null` (a privacy-sensitive
 * context) says nothing; the SameSite cookie still keeps another site's POST out.
 */
function sameOrigin(event: Pick<APIGatewayProxyEvent, 'headers'>): boolean {
  const site = header(event.headers, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = header(event.headers, 'origin');
  if (origin === undefined || origin === 'null') return true;
  try {
    return new URL(origin).host === header(event.headers, 'host');
  } catch {
    return false;
  }
}

const single = (params: Record<string, string | undefined> | null) =>
  Object.fromEntries(
    Object.entries(params ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );

export async function authorizationEndpoint(deps: AuthorizeDeps, event: APIGatewayProxyEvent) {
  const given = browserCookie(event);
  const cookie = given ?? randomBytes(32).toString('base64url');
  const cookieHeaders: Record<string, string> =
    given === undefined ? { 'Set-Cookie': setCookie(cookie) } : {};
  const browser = digestOf(cookie);
  if (event.httpMethod === 'GET') {
    const multi = event.multiValueQueryStringParameters ?? {};
    const repeated = repeatedParameter(
      Object.entries(multi).flatMap(([name, values]) =>
        (values ?? []).map((value): [string, string] => [name, value]),
      ),
    );
    if (repeated !== undefined)
      return respond({
        page: 'problem',
        status: 400,
        message: `The parameter ${repeated} is sent more than once.`,
      });
    return respond(
      await openAuthorization(deps, { query: single(event.queryStringParameters), browser }),
      cookieHeaders,
    );
  }
  if (!sameOrigin(event))
    return respond({ page: 'problem', status: 403, message: 'This form must be sent from its own page.' });
  const parsed = v.safeParse(PageFormSchema, formParameters(event));
  if (!parsed.success)
    return respond({
      page: 'problem',
      status: 400,
      message: 'The form is incomplete. Start again from the platform.',
    });
  const sourceIp = event.requestContext?.identity?.sourceIp ?? '';
  // A sign-in binds the request to a new cookie: one planted before it decides nothing.
  const next = randomBytes(32).toString('base64url');
  const screen = await submitPage(deps, {
    form: parsed.output,
    browser,
    nextBrowser: digestOf(next),
    sourceIp,
    relyingParty: relyingPartyOf(publicBaseUrl(event)),
  });
  const signedIn =
    parsed.output.action !== 'approve' && parsed.output.action !== 'deny' && screen.page === 'consent';
  return respond(screen, signedIn ? { 'Set-Cookie': setCookie(next) } : cookieHeaders);
}
