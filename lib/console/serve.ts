/**
 * The administrators' console as the stage serves it (docs/administrators.md): one page, its
 * script and its stylesheet, read once at cold start and answered from memory. They are files
 * beside this one: the page and stylesheet as written, the script as esbuild bundled it from the
 * TypeScript here (main.ts and what it imports; infra/console-script.ts). The function's package
 * carries the three (serverless.yml's package patterns), so the handler names where they are.
 *
 * The page is the API's own origin and holds an administrator's tokens in memory, so every
 * answer forbids what would let another origin's code or frame near it: a CSP that allows this
 * origin's script, style and fetches only, no framing, no form posts, no <base>.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError } from '../errors.ts';
import { problemResponse } from '../http/problems.ts';
import { SCOPES, SELF_SERVICE_CLIENT_SCOPES } from '../scopes.ts';

/** The headers of every answer, the 404 included. */
export const SECURITY_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  // A year of HTTPS only for this host; not its subdomains, which are the carrier's. Browsers
  // ignore it over the local stack's plain HTTP.
  'Strict-Transport-Security': 'max-age=31536000',
} as const;

/** The files by the request's `{asset}` (none: GET /console, the page itself), and their types. */
const FILES = new Map<string | undefined, { readonly file: string; readonly type: string }>([
  [undefined, { file: 'console.html', type: 'text/html; charset=utf-8' }],
  ['console.js', { file: 'console.js', type: 'text/javascript; charset=utf-8' }],
  ['console.css', { file: 'console.css', type: 'text/css; charset=utf-8' }],
]);
/** Where the page gets the create form's scope choices. */
const SCOPE_CHOICES = '<!-- scope choices -->';

interface Asset {
  readonly type: string;
  readonly body: string;
  /** Strong, of the body: every answer is revalidated, so a deploy never mixes old and new files. */
  readonly etag: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The create form's scope choices: what an administrator may give a client, as lib/scopes.json describes them. */
function scopeChoices(): string {
  return SELF_SERVICE_CLIENT_SCOPES.map(
    (scope) =>
      `<label class="choice"><input type="checkbox" name="scope" value="${escapeHtml(scope)}"> ` +
      `<code>${escapeHtml(scope)}</code> <span class="hint">${escapeHtml(SCOPES[scope])}</span></label>`,
  ).join('\n');
}

const asset = (type: string, body: string): Asset => ({
  type,
  body,
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
});

/** What the answer depends on: the request's `{asset}` (none for the page) and its If-None-Match. */
export interface ConsoleRequest {
  readonly asset: string | undefined;
  readonly ifNoneMatch: string | undefined;
}

/**
 * Reads the console's files from `dir` (a directory URL ending in `/`) and returns the answer to
 * a GET of the page or of one of its assets. If-None-Match with the current ETag gets 304. Any
 * other name is 404 problem+json, with the same headers.
 */
export function consoleFiles(dir: URL) {
  const assets = new Map<string | undefined, Asset>();
  for (const [name, { file, type }] of FILES) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    if (name === undefined && !text.includes(SCOPE_CHOICES))
      throw new Error(`${file} has no ${SCOPE_CHOICES}`);
    assets.set(name, asset(type, name === undefined ? text.replace(SCOPE_CHOICES, scopeChoices()) : text));
  }
  const notFound = problemResponse(new AppError('NOT_FOUND', { detail: 'The console has no such file.' }));

  return ({ asset: name, ifNoneMatch }: ConsoleRequest): APIGatewayProxyResult => {
    const found = assets.get(name);
    if (found === undefined) return { ...notFound, headers: { ...notFound.headers, ...SECURITY_HEADERS } };
    const headers = {
      ...SECURITY_HEADERS,
      'Content-Type': found.type,
      'Cache-Control': 'no-cache',
      ETag: found.etag,
    };
    const matches = ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === found.etag);
    if (matches === true) return { statusCode: 304, headers, body: '' };
    return { statusCode: 200, headers, body: found.body };
  };
}
