/**
 * The warm login functions at one bcrypt cost against a bcryptjs compare alone, of the same
 * password against the same stored hash at the same cost. The first (warm-up) login has
 * already upgraded the seeded cost-4 hash to the stage's cost when the compare reads it.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoStatusReader } from '../../lib/users/dynamodb.ts';
import { lambdaContext, loginEvent } from '../harness/fixtures.ts';
import { call200, credentialsBody, type HttpHandler, importLogin, importLoginExtended } from './handlers.ts';
import { interleaved, type Plan, type Variant } from './measure.ts';
import type { LoginResult } from './results.ts';
import { benchStage, PASSWORD } from './stage.ts';

/** A handler on fresh copies of one successful login event (the body parser replaces `body`). */
function handlerVariant(name: string, handler: HttpHandler, body: string): Variant {
  const template = loginEvent(body);
  const context = lambdaContext();
  let events: APIGatewayProxyEvent[] = [];
  return {
    name,
    prepare: (calls) => {
      events = Array.from({ length: calls }, () => structuredClone(template));
    },
    run: async (index) => {
      const event = events[index];
      if (event === undefined) throw new Error('no event prepared');
      const response = await handler(event, context);
      if (response.statusCode !== 200) throw new Error(`${name} answered ${response.statusCode}`);
    },
  };
}

export async function loginPart(options: {
  endpoint: string;
  cost: number;
  plan: Plan;
}): Promise<LoginResult> {
  const stage = await benchStage({ endpoint: options.endpoint, env: { BCRYPT_COST: String(options.cost) } });
  try {
    const login = await importLogin();
    const loginExtended = await importLoginExtended();
    const body = credentialsBody('alice', PASSWORD);
    await call200(login, body);
    const hash = (await stage.accounts.findByUsername('alice'))?.passwordHash;
    if (hash === undefined || bcrypt.getRounds(hash) !== options.cost) {
      throw new Error(`the stored hash is not at cost ${options.cost}`);
    }
    const statusReader = createDynamoStatusReader({
      client: createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint }),
      tableName: tableNames(stage.name).accounts,
    });
    const samples = await interleaved(
      [
        handlerVariant('login', login, body),
        handlerVariant('loginExtended', loginExtended, body),
        {
          // One DynamoDB round trip on loopback, as the handlers' client makes it.
          name: 'getItem',
          run: async () => {
            if ((await statusReader.findStatus('alice')) === null) throw new Error('alice not found');
          },
        },
        {
          name: 'compare',
          run: async () => {
            if (!(await bcrypt.compare(PASSWORD, hash))) throw new Error('compare failed');
          },
        },
      ],
      options.plan,
    );
    const { login: loginSample, loginExtended: extendedSample, compare, getItem } = samples;
    if (
      loginSample === undefined ||
      extendedSample === undefined ||
      compare === undefined ||
      getItem === undefined
    ) {
      throw new Error('missing sample');
    }
    return {
      part: 'login',
      cost: options.cost,
      samples: { login: loginSample, loginExtended: extendedSample, compare, getItem },
    };
  } finally {
    await stage.close();
  }
}
