/**
 * What infra/gateway-responses.yml states API Gateway answers, read here on its own (not
 * through dev/local/gateway-responses.ts), for the tests of the local stack's gateway front.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { parse } from 'yaml';

const FILE = resolve(import.meta.dirname, '../../infra/gateway-responses.yml');

const yml = v.parse(
  v.object({
    Resources: v.record(
      v.string(),
      v.object({
        Properties: v.object({
          ResponseType: v.string(),
          StatusCode: v.optional(v.string()),
          ResponseParameters: v.record(v.string(), v.string()),
          ResponseTemplates: v.record(v.string(), v.string()),
        }),
      }),
    ),
  }),
  parse(readFileSync(FILE, 'utf8')),
);

export interface StatedAnswer {
  readonly status: number;
  /** Lower-case names, as `Headers.get` takes them. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The gateway response of `type` to an error of `status` whose message is `message`: its
 * status code (else `status`), its `gatewayresponse.header.*` values without their quotes, and
 * its application/json template with `$context.error.messageString` as the quoted message.
 */
export function statedGatewayResponse(type: string, status: number, message: string): StatedAnswer {
  const found = Object.values(yml.Resources).find((resource) => resource.Properties.ResponseType === type);
  if (found === undefined) throw new Error(`no ${type} in infra/gateway-responses.yml`);
  const { StatusCode, ResponseParameters, ResponseTemplates } = found.Properties;
  return {
    status: StatusCode === undefined ? status : Number(StatusCode),
    headers: Object.fromEntries(
      Object.entries(ResponseParameters).map(([name, value]) => [
        name.replace('gatewayresponse.header.', '').toLowerCase(),
        value.slice(1, -1),
      ]),
    ),
    body: (ResponseTemplates['application/json'] ?? '').replace(
      '$context.error.messageString',
      JSON.stringify(message),
    ),
  };
}
