/**
 * API Gateway's gateway responses as infra/gateway-responses.yml defines them for AWS, read
 * for the local stack, which has no API Gateway to answer with them (dev/local/gateway.ts).
 */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { parse } from 'yaml';

const GATEWAY_RESPONSES_FILE = new URL('../../infra/gateway-responses.yml', import.meta.url);

/** The gateway response types the local stack gives (API Gateway has more). */
export type ResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

/** An error of API Gateway itself, before any gateway response is applied. */
export interface GatewayError {
  readonly type: ResponseType;
  /** The error's own status, kept when its gateway response sets none. */
  readonly status: number;
  /** `$context.error.message`. */
  readonly message: string;
}

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** `$context.error.messageString`: the message as a quoted string. */
const MESSAGE_STRING = '$context.error.messageString';

const HEADER_PREFIX = 'gatewayresponse.header.';

const FileSchema = v.object({
  Resources: v.record(
    v.string(),
    v.object({
      Type: v.literal('AWS::ApiGateway::GatewayResponse'),
      Properties: v.object({
        ResponseType: v.string(),
        StatusCode: v.optional(v.pipe(v.string(), v.regex(/^[1-5]\d\d$/), v.transform(Number))),
        ResponseParameters: v.optional(v.record(v.string(), v.string()), {}),
        ResponseTemplates: v.optional(v.record(v.string(), v.string()), {}),
      }),
    }),
  ),
});

type Properties = v.InferOutput<typeof FileSchema>['Resources'][string]['Properties'];

interface Definition {
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly template: string;
}

/**
 * Only what the local stack can render: static header values (`'…'`) and templates whose one
 * variable is `$context.error.messageString`. Anything else fails `npm start` at once rather
 * than answering with an unrendered template.
 */
function definition(name: string, properties: Properties): Definition {
  const headers: Record<string, string> = {};
  for (const [parameter, value] of Object.entries(properties.ResponseParameters)) {
    const literal = /^'(.*)'$/s.exec(value)?.[1];
    if (!parameter.startsWith(HEADER_PREFIX) || literal === undefined)
      throw new Error(`${name}: ${parameter} ${value} is not a static header the local stack can give`);
    headers[parameter.slice(HEADER_PREFIX.length)] = literal;
  }
  const template = properties.ResponseTemplates['application/json'];
  if (template === undefined) throw new Error(`${name}: no application/json template`);
  if (template.replaceAll(MESSAGE_STRING, '').includes('$'))
    throw new Error(`${name}: its template uses a variable the local stack does not render`);
  return { status: properties.StatusCode, headers, template };
}

export type GatewayResponses = (error: GatewayError) => Answer;

/**
 * The answer API Gateway gives to `error`: its type's gateway response, else DEFAULT_4XX's or
 * DEFAULT_5XX's (by the error's status), else API Gateway's built-in `{"message":…}`.
 */
export function readGatewayResponses(file: URL | string = GATEWAY_RESPONSES_FILE): GatewayResponses {
  const parsed = v.parse(FileSchema, parse(readFileSync(file, 'utf8')));
  const defined = new Map<string, Definition>();
  for (const [name, { Properties }] of Object.entries(parsed.Resources))
    defined.set(Properties.ResponseType, definition(name, Properties));
  return ({ type, status, message }) => {
    const found = defined.get(type) ?? defined.get(status < 500 ? 'DEFAULT_4XX' : 'DEFAULT_5XX');
    const quoted = JSON.stringify(message);
    if (found === undefined)
      return { status, headers: { 'Content-Type': 'application/json' }, body: `{"message":${quoted}}` };
    return {
      status: found.status ?? status,
      headers: found.headers,
      body: found.template.replaceAll(MESSAGE_STRING, () => quoted),
    };
  };
}
