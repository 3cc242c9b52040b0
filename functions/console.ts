import type { APIGatewayProxyEvent } from 'aws-lambda';
import { consoleFiles } from '../lib/console/serve.ts';
import { header } from '../lib/http/headers.ts';

// lib/console/ from here in the repository and, copied by serverless.yml's package patterns, in
// the package and the local stack's build folder; its console.js is built (infra/console-script.ts).
const answer = consoleFiles(new URL('../lib/console/', import.meta.url));

/** GET /console (the administrators' console) and GET /console/{asset} (its script and stylesheet). */
export const handler = async (event: Pick<APIGatewayProxyEvent, 'pathParameters' | 'headers'>) =>
  answer({ asset: event.pathParameters?.asset, ifNoneMatch: header(event.headers, 'if-none-match') });
