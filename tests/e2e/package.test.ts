/**
 * `serverless package --stage prod` runs offline, without AWS credentials, and produces the
 * template we mean to deploy: checked here resource by resource.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableNames } from '../../lib/stage.ts';
import { unzip } from '../../scripts/bench/bundles.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const serverless = createRequire(import.meta.url).resolve('serverless/bin/serverless.js');

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Condition?: string;
}
interface Template {
  Resources: Record<string, Resource>;
  Conditions?: Record<string, unknown>;
}

const NO_VALUE = Symbol('AWS::NoValue');

/**
 * The template as CloudFormation deploys it: each resource whose `Condition` is false left
 * out, each `Fn::If` replaced by the branch its condition picks, each `AWS::NoValue` removed.
 * The conditions compare literals only (stage parameters), so they are evaluated here.
 */
function deployedResources(template: Template): Record<string, Resource> {
  const conditions = template.Conditions ?? {};
  const scalar = (value: unknown) => {
    if (typeof value === 'object' && value !== null)
      throw new Error(`not a literal: ${JSON.stringify(value)}`);
    return String(value);
  };
  const holds = (condition: unknown): boolean => {
    const [[fn, args] = []] = Object.entries(condition as Record<string, unknown[]>);
    if (fn === 'Fn::Equals') return scalar(args?.[0]) === scalar(args?.[1]);
    if (fn === 'Fn::Not') return !holds(args?.[0]);
    if (fn === 'Fn::And') return (args ?? []).every(holds);
    if (fn === 'Fn::Or') return (args ?? []).some(holds);
    if (fn === 'Condition') return holds(conditions[String(args)]);
    throw new Error(`cannot evaluate condition ${JSON.stringify(condition)}`);
  };
  const named = (name: unknown) => {
    if (!(String(name) in conditions)) throw new Error(`no condition ${String(name)}`);
    return holds(conditions[String(name)]);
  };
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve).filter((item) => item !== NO_VALUE);
    if (typeof node !== 'object' || node === null) return node;
    const entries = Object.entries(node);
    if (entries.length === 1 && entries[0]?.[0] === 'Fn::If') {
      const [name, then, otherwise] = entries[0][1] as unknown[];
      return resolve(named(name) ? then : otherwise);
    }
    if (entries.length === 1 && entries[0]?.[0] === 'Ref' && entries[0][1] === 'AWS::NoValue')
      return NO_VALUE;
    return Object.fromEntries(
      entries.map(([key, value]) => [key, resolve(value)]).filter(([, value]) => value !== NO_VALUE),
    );
  };
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([, resource]) => resource.Condition === undefined || named(resource.Condition))
      .map(([id, resource]) => [id, resolve(resource) as Resource]),
  );
}

/** A packaged stage: its artifacts' folder, the template's text and its deployed resources. */
interface Packaged {
  readonly dir: string;
  readonly templateText: string;
  readonly resources: Record<string, Resource>;
}

/** `serverless package --stage prod` with `args`, offline and without any AWS credentials. */
async function packageProd(name: string, args: string[] = []): Promise<Packaged> {
  const dir = await mkdtemp(join(tmpdir(), `parcel-auth-package-${name}-`));
  // No credentials anywhere: the package step must not need an AWS account.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_')));
  await promisify(execFile)(
    process.execPath,
    [serverless, 'package', '--stage', 'prod', '--package', dir, ...args],
    {
      cwd: ROOT,
      env: {
        ...env,
        AWS_CONFIG_FILE: '/nonexistent',
        AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
        ESBUILD_WORK_FOLDER: `.esbuild/package-${process.pid}-${name}`,
      },
    },
  );
  const templateText = await readFile(join(dir, 'cloudformation-template-update-stack.json'), 'utf8');
  return { dir, templateText, resources: deployedResources(JSON.parse(templateText)) };
}

/** An operator's own key: the stage parameter kmsKeyArn, given on the command line. */
const KMS_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

let dir: string;
let templateText: string;
let resources: Record<string, Resource>;
/** The same stage with its own KMS key and X-Ray tracing on. */
let customized: Packaged;
const ofType = (type: string, from = resources) => Object.entries(from).filter(([, r]) => r.Type === type);
const variablesOf = (id: string): Record<string, unknown> => {
  const environment = resources[id]?.Properties.Environment as
    | { Variables?: Record<string, unknown> }
    | undefined;
  return environment?.Variables ?? {};
};

/** An intrinsic as text: a `Fn::Join` of strings, `Ref`s (`<Name>`) and `Fn::GetAtt`s (`<Name.Attr>`). */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as { Ref?: string; 'Fn::GetAtt'?: string[]; 'Fn::Join'?: [string, unknown[]] };
  if (node.Ref !== undefined) return `<${node.Ref}>`;
  if (node['Fn::GetAtt'] !== undefined) return `<${node['Fn::GetAtt'].join('.')}>`;
  if (node['Fn::Join'] !== undefined) return node['Fn::Join'][1].map(joined).join(node['Fn::Join'][0]);
  throw new Error(`cannot read ${JSON.stringify(value)}`);
}

/** The path of an API Gateway resource (`{ Ref: id }`), from its parents' path parts. */
function pathOf(from: Record<string, Resource>, resourceId: unknown): string {
  const id = (resourceId as { Ref?: string }).Ref;
  const resource = id === undefined ? undefined : from[id];
  if (resource === undefined) return '';
  return `${pathOf(from, resource.Properties.ParentId)}/${String(resource.Properties.PathPart)}`;
}

/** The stage settings the framework's Deployment carries (infra/stage-*.cjs add them). */
function stageOf(from: Record<string, Resource>): Record<string, unknown> {
  const deployments = ofType('AWS::ApiGateway::Deployment', from);
  expect(deployments).toHaveLength(1);
  return (deployments[0]?.[1].Properties.StageDescription ?? {}) as Record<string, unknown>;
}

beforeAll(async () => {
  // One after the other: two framework processes started together share ~/.serverless.
  ({ dir, templateText, resources } = await packageProd('default'));
  customized = await packageProd('options', ['--param', `kmsKeyArn=${KMS_KEY}`, '--param', 'tracing=true']);
});
afterAll(async () => {
  for (const packaged of [dir, customized?.dir]) {
    if (packaged !== undefined) await rm(packaged, { recursive: true, force: true });
  }
  for (const name of ['default', 'options']) {
    await rm(join(ROOT, `.esbuild/package-${process.pid}-${name}`), { recursive: true, force: true });
  }
});

describe('the prod CloudFormation template', () => {
  it('runs every function on nodejs24.x, each from its own artifact', async () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual([
      'AuthorizerLambdaFunction',
      'CreateShipmentLambdaFunction',
      'JwksLambdaFunction',
      'LoginExtendedLambdaFunction',
      'LoginLambdaFunction',
      'LogoutLambdaFunction',
      'RefreshLambdaFunction',
      'TrackShipmentLambdaFunction',
    ]);
    for (const [, fn] of functions) expect(fn.Properties.Runtime).toBe('nodejs24.x');
    const zips = (await readdir(dir)).filter((name) => name.endsWith('.zip'));
    expect(zips).toHaveLength(functions.length);
  });

  it('ships each function as one minified bundle, the AWS SDK inside', async () => {
    for (const zip of (await readdir(dir)).filter((name) => name.endsWith('.zip'))) {
      const files = unzip(await readFile(join(dir, zip)));
      expect([...files.keys()]).toHaveLength(1);
      const bundle = [...files.values()][0]?.toString('utf8') ?? '';
      // Nothing left for node_modules to provide: no bare import but node: built-ins, and the
      // SDK's optional CRT signer, which it tries only for SigV4a (never used here).
      const imports = [...bundle.matchAll(/(?<=[}*\s]|^)from\s*"([^"]+)"|\bimport\s*\(?\s*"([^"]+)"/gm)].map(
        (match) => match[1] ?? match[2] ?? '',
      );
      const allowed = new Set([...builtinModules, '@aws-sdk/signature-v4-crt']);
      expect(imports.filter((name) => !name.startsWith('node:') && !allowed.has(name))).toEqual([]);
      // Minified: lines thousands of characters long (unminified code averages under 40).
      expect(bundle.length / bundle.split('\n').length).toBeGreaterThan(1000);
    }
  });

  it('puts the REQUEST authorizer on the API routes, and none on the public ones', () => {
    const [authorizer] = ofType('AWS::ApiGateway::Authorizer');
    expect(authorizer?.[1].Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 300,
    });
    const methods = ofType('AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod !== 'OPTIONS',
    );
    expect(methods).toHaveLength(7);
    for (const [id, method] of methods) {
      // login, login-extended, token/refresh, logout and the key set are public.
      const isPublic = /Login|Token|Logout|Jwks/.test(id);
      expect(method.Properties.AuthorizationType, id).toBe(isPublic ? 'NONE' : 'CUSTOM');
      if (!isPublic) expect(method.Properties.AuthorizerId, id).toEqual({ Ref: authorizer?.[0] });
    }
    expect(methods.filter(([, m]) => m.Properties.AuthorizationType === 'CUSTOM')).toHaveLength(2);
  });

  it('sets the token lifetimes from the stage parameters', () => {
    const env = variablesOf;
    expect(env('LoginLambdaFunction')).toMatchObject({ ACCESS_TOKEN_TTL: '24h', REFRESH_TOKEN_TTL: '30d' });
    expect(env('LoginExtendedLambdaFunction')).toMatchObject({
      ACCESS_TOKEN_TTL: '24h',
      REFRESH_TOKEN_TTL: '30d',
    });
    expect(env('AuthorizerLambdaFunction')).toMatchObject({ ACCESS_TOKEN_TTL: '24h' });
    expect(env('AuthorizerLambdaFunction').REFRESH_TOKEN_TTL).toBeUndefined();
  });

  it('defines the tables on demand, with point-in-time recovery, encryption and prod protection', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables.map(([, t]) => t.Properties.TableName).sort()).toEqual(
      Object.values(tableNames('prod')).sort(),
    );
    for (const [id, table] of tables) {
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      });
      expect(table.Properties.PointInTimeRecoverySpecification, id).toEqual({
        PointInTimeRecoveryEnabled: true,
      });
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    }
  });

  it('throttles the API Gateway stage, and the login routes lower, with the stage parameters', () => {
    const [deployment] = ofType('AWS::ApiGateway::Deployment');
    const login = (path: string) => ({
      ResourcePath: path,
      HttpMethod: 'POST',
      ThrottlingRateLimit: 50,
      ThrottlingBurstLimit: 100,
    });
    expect(deployment?.[1].Properties.StageDescription).toMatchObject({
      ThrottlingRateLimit: 200,
      ThrottlingBurstLimit: 400,
      MethodSettings: [
        login('~1api~1v1~1login'),
        login('~1api~1v1~1login-extended'),
        login('~1api~1v1~1token~1refresh'),
      ],
    });
  });

  describe('least privilege: one role per function', () => {
    type Statement = { Effect: string; Action: string[]; Resource: unknown[]; Condition?: unknown };
    const statementsOf = (roleId: string): Statement[] => {
      const policies = resources[roleId]?.Properties.Policies as {
        PolicyDocument: { Statement: Statement[] };
      }[];
      return policies.flatMap((policy) => policy.PolicyDocument.Statement);
    };
    const roleOf = (fn: string) => {
      const role = resources[fn]?.Properties.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
      return role?.['Fn::GetAtt']?.[0] ?? '';
    };
    /** `action on target` for every grant of a role, its log statement left out. */
    const grants = (roleId: string) =>
      statementsOf(roleId)
        .filter((statement) => !statement.Action.every((action) => action.startsWith('logs:')))
        .flatMap((statement) =>
          statement.Action.flatMap((action) =>
            statement.Resource.map((resource) => {
              const text = JSON.stringify(resource);
              const target =
                /"([A-Za-z]+Table)"/.exec(text)?.[1] ?? /parameter\/[^"]+/.exec(text)?.[0] ?? text;
              return `${action} on ${target}`;
            }),
          ),
        )
        .sort();

    it('gives every function a role of its own kind, and creates no shared role', () => {
      expect(ofType('AWS::IAM::Role').map(([id]) => id)).not.toContain('IamRoleLambdaExecution');
      expect(Object.fromEntries(ofType('AWS::Lambda::Function').map(([id]) => [id, roleOf(id)]))).toEqual({
        LoginLambdaFunction: 'LoginRole',
        LoginExtendedLambdaFunction: 'LoginRole',
        RefreshLambdaFunction: 'RefreshRole',
        LogoutLambdaFunction: 'LogoutRole',
        JwksLambdaFunction: 'JwksRole',
        AuthorizerLambdaFunction: 'AuthorizerRole',
        CreateShipmentLambdaFunction: 'CreateShipmentRole',
        TrackShipmentLambdaFunction: 'TrackShipmentRole',
      });
    });

    it('allows no wildcard action and no wildcard resource', () => {
      for (const [id] of ofType('AWS::IAM::Role')) {
        for (const statement of statementsOf(id)) {
          expect(statement.Effect, id).toBe('Allow');
          for (const action of statement.Action) expect(action, id).not.toContain('*');
          for (const resource of statement.Resource) {
            const text = JSON.stringify(resource);
            // A log group's ARN ends in :* (its log streams): the only `*` allowed, and only
            // as CloudFormation's own GetAtt of the function's log group.
            if (statement.Action.every((action) => action.startsWith('logs:'))) {
              expect(text, id).toMatch(/^\{"Fn::GetAtt":\["[A-Za-z]+LogGroup","Arn"\]\}$/);
            } else {
              expect(text, id).not.toContain('*');
            }
          }
        }
      }
    });

    it('lets each function write only its own log group', () => {
      const logGroups = (roleId: string) =>
        statementsOf(roleId)
          .filter((statement) => statement.Action.every((action) => action.startsWith('logs:')))
          .flatMap((statement) => statement.Resource.map((resource) => JSON.stringify(resource)))
          .map((text) => /"([A-Za-z]+)LogGroup"/.exec(text)?.[1]);
      expect(logGroups('LoginRole')).toEqual(['Login', 'LoginExtended']);
      expect(logGroups('AuthorizerRole')).toEqual(['Authorizer']);
      expect(logGroups('TrackShipmentRole')).toEqual(['TrackShipment']);
    });

    it('grants each function the actions its code makes, on its own tables and parameters', () => {
      const keyring = 'parameter/parcel-auth/prod/signing-keyring';
      const jwks = 'parameter/parcel-auth/prod/jwks';
      expect(grants('LoginRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          `ssm:GetParameter on ${keyring}`,
        ].sort(),
      );
      expect(grants('RefreshRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          `ssm:GetParameter on ${keyring}`,
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      expect(grants('LogoutRole')).toEqual([
        'dynamodb:UpdateItem on SessionsTable',
        `ssm:GetParameter on ${jwks}`,
      ]);
      expect(grants('JwksRole')).toEqual([`ssm:GetParameter on ${jwks}`]);
      expect(grants('AuthorizerRole')).toEqual([
        'dynamodb:GetItem on AccountsTable',
        `ssm:GetParameter on ${jwks}`,
      ]);
      expect(grants('CreateShipmentRole')).toEqual(['dynamodb:PutItem on ShipmentsTable']);
      // The authorizer reads user items only, and only the attributes it projects: never a hash.
      const read = statementsOf('AuthorizerRole').find((statement) =>
        statement.Action.includes('dynamodb:GetItem'),
      );
      expect(read).toMatchObject({
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': ['pk', 'sk', 'username', 'enabled', 'revokedBefore'],
          },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      });
      expect(grants('TrackShipmentRole')).toEqual(['dynamodb:GetItem on ShipmentsTable']);
    });
  });

  it('keeps every function’s logs and the access log for the stage’s retention', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    expect(groups.map(([id]) => id)).toContain('ApiAccessLogGroup');
    expect(groups).toHaveLength(9);
    for (const [id, group] of groups) expect(group.Properties.RetentionInDays, id).toBe(365);
  });

  it('builds every ARN with the stack’s partition: none hard-codes arn:aws', () => {
    expect(templateText).not.toMatch(/arn:aws/);
    // Every ARN it builds (a Fn::Join that starts with `arn:`) continues with the partition.
    const built: unknown[] = [];
    const visit = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const parts = (node as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join']?.[1];
      if (typeof parts?.[0] === 'string' && parts[0].startsWith('arn:')) built.push([parts[0], parts[1]]);
      for (const child of Object.values(node)) visit(child);
    };
    visit(JSON.parse(templateText));
    expect(built.length).toBeGreaterThan(10);
    for (const arn of built) expect(arn).toEqual(['arn:', { Ref: 'AWS::Partition' }]);
  });

  it('logs every request of the stage as a JSON line, to a log group of its own, never a header or a body', () => {
    const stage = stageOf(resources);
    expect(stage.AccessLogSetting).toMatchObject({
      DestinationArn: { 'Fn::GetAtt': ['ApiAccessLogGroup', 'Arn'] },
    });
    expect(resources.ApiAccessLogGroup?.Properties.LogGroupName).toBe(
      '/aws/api-gateway/parcel-auth-prod-access',
    );
    const format = String((stage.AccessLogSetting as { Format?: unknown } | undefined)?.Format);
    expect(format).not.toContain('\n');
    const fields = JSON.parse(format) as Record<string, string>;
    expect(Object.values(fields)).toEqual(
      expect.arrayContaining([
        '$context.requestId',
        '$context.identity.sourceIp',
        '$context.resourcePath',
        '$context.status',
        '$context.responseLatency',
        '$context.authorizer.principalId',
      ]),
    );
    // Only $context variables, and not the concrete path (it may hold a parcel number).
    for (const value of Object.values(fields)) expect(value).toMatch(/^\$context\.[A-Za-z.]+$/);
    expect(Object.values(fields)).not.toContain('$context.path');
    expect(format).not.toMatch(/authorization|header|\$input|\$method/i);
  });

  it('traces nothing with X-Ray unless the stage says so', () => {
    expect(stageOf(resources).TracingEnabled).toBe(false);
    for (const [id, fn] of ofType('AWS::Lambda::Function'))
      expect(fn.Properties.TracingConfig, id).toBeUndefined();
    for (const [id, role] of ofType('AWS::IAM::Role'))
      expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
  });

  it('keeps to the AWS-managed keys unless the stage names its own', () => {
    for (const [id, group] of ofType('AWS::Logs::LogGroup'))
      expect(group.Properties.KmsKeyId, id).toBeUndefined();
    expect(resources.AlarmTopic?.Properties.KmsMasterKeyId).toBeUndefined();
    expect(JSON.stringify(ofType('AWS::IAM::Role'))).not.toContain('kms:');
  });

  it('lets API Gateway invoke each function only for its own method and path, and the authorizer only as the authorizer', () => {
    const permissions = Object.fromEntries(
      ofType('AWS::Lambda::Permission').map(([, permission]) => [
        joined((permission.Properties.FunctionName as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]),
        permission.Properties,
      ]),
    );
    const api = 'arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<ApiGatewayRestApi>';
    const expected: Record<string, string> = {
      AuthorizerLambdaFunction: `${api}/authorizers/<AuthorizerApiGatewayAuthorizer>`,
    };
    for (const [, method] of ofType('AWS::ApiGateway::Method')) {
      const target = JSON.stringify(method.Properties.Integration);
      const fn = /"([A-Za-z]+LambdaFunction)"/.exec(target)?.[1] ?? target;
      const path = pathOf(resources, method.Properties.ResourceId).replace(/\{[^}]+\}/g, '*');
      expected[fn] = `${api}/prod/${String(method.Properties.HttpMethod)}${path}`;
    }
    expect(Object.keys(expected)).toHaveLength(8);
    expect(
      Object.fromEntries(Object.entries(permissions).map(([fn, p]) => [fn, joined(p.SourceArn)])),
    ).toEqual(expected);
    for (const permission of Object.values(permissions)) {
      expect(permission).toMatchObject({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
      });
    }
  });

  it('alarms on 5xx rate, function errors, authorizer failures, throttles and failed logins, to the stage topic', () => {
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm'));
    expect(Object.keys(alarms).sort()).toEqual([
      'Api5xxRateAlarm',
      'AuthorizerFailureAlarm',
      'FailedLoginsAlarm',
      'FunctionErrorsAlarm',
      'ThrottlesAlarm',
    ]);
    expect(resources.AlarmTopic?.Properties.TopicName).toBe('parcel-auth-prod-alarms');
    for (const [id, alarm] of Object.entries(alarms)) {
      expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: 'AlarmTopic' }]);
      expect(alarm.Properties.TreatMissingData, id).toBe('notBreaching');
    }
    expect(alarms.Api5xxRateAlarm?.Properties).toMatchObject({
      MetricName: '5XXError',
      Statistic: 'Average',
      Dimensions: [
        { Name: 'ApiName', Value: 'prod-parcel-auth' },
        { Name: 'Stage', Value: 'prod' },
      ],
    });
    // The authorizer's deliberate `Unauthorized` errors are not function errors: its real
    // failures come from its log instead.
    const errorMetrics = JSON.stringify(alarms.FunctionErrorsAlarm?.Properties.Metrics);
    expect(errorMetrics).not.toContain('AuthorizerLambdaFunction');
    for (const fn of [
      'Login',
      'LoginExtended',
      'Refresh',
      'Logout',
      'Jwks',
      'CreateShipment',
      'TrackShipment',
    ]) {
      expect(errorMetrics).toContain(`"${fn}LambdaFunction"`);
    }
    const filters = Object.fromEntries(ofType('AWS::Logs::MetricFilter'));
    expect(filters.AuthorizerFailureMetricFilter?.Properties).toMatchObject({
      LogGroupName: { Ref: 'AuthorizerLogGroup' },
      FilterPattern: '{ $.level = "ERROR" }',
    });
    const throttled = JSON.stringify(alarms.ThrottlesAlarm?.Properties.Metrics);
    for (const [id] of ofType('AWS::Lambda::Function')) expect(throttled).toContain(`"${id}"`);
    for (const group of ['LoginLogGroup', 'LoginExtendedLogGroup']) {
      expect(Object.values(filters).map((filter) => filter.Properties)).toContainEqual(
        expect.objectContaining({
          LogGroupName: { Ref: group },
          FilterPattern: '{ $.message = "login failed" }',
        }),
      );
    }
    expect(alarms.FailedLoginsAlarm?.Properties).toMatchObject({
      MetricName: 'FailedLogins',
      Threshold: 200,
    });
  });

  it('gives the login functions the brute-force limits of the stage', () => {
    for (const fn of ['LoginLambdaFunction', 'LoginExtendedLambdaFunction']) {
      expect(variablesOf(fn)).toMatchObject({
        LOGIN_THROTTLE_TABLE: 'parcel-auth-prod-login-throttle',
        LOGIN_FAILURE_LIMIT: '5',
        IP_FAILURE_LIMIT: '100',
        LOGIN_LOCKOUT_BASE: '30s',
        LOGIN_LOCKOUT_MAX: '15m',
      });
    }
  });

  it('answers API Gateway’s own errors as problem+json, with WWW-Authenticate on 401', () => {
    const responses: Record<string, Record<string, unknown>> = Object.fromEntries(
      ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => [
        String(r.Properties.ResponseType),
        r.Properties,
      ]),
    );
    expect(Object.keys(responses).sort()).toEqual([
      'ACCESS_DENIED',
      'DEFAULT_4XX',
      'DEFAULT_5XX',
      'THROTTLED',
      'UNAUTHORIZED',
    ]);
    for (const response of Object.values(responses)) {
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/problem+json'",
      });
    }
    expect(responses.UNAUTHORIZED?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.WWW-Authenticate': "'Bearer'",
    });
    expect(responses.DEFAULT_5XX?.StatusCode).toBe('503');
    expect(responses.THROTTLED).toMatchObject({
      StatusCode: '429',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
    });
    for (const response of Object.values(responses)) {
      const body = JSON.stringify(response.ResponseTemplates);
      expect(body).toContain('urn:parcel-auth:problem:');
    }
  });

  it('gives the session settings to the functions that use them', () => {
    expect(variablesOf('RefreshLambdaFunction')).toMatchObject({
      SESSION_MAX_LIFETIME: '90d',
      REFRESH_REUSE_GRACE: '0s',
      SESSIONS_TABLE: 'parcel-auth-prod-sessions',
    });
    expect(variablesOf('AuthorizerLambdaFunction')).toMatchObject({
      REVOCATION_CACHE_TTL: '30s',
      ACCOUNTS_TABLE: 'parcel-auth-prod-accounts',
    });
    const [, sessions] = ofType('AWS::DynamoDB::Table').find(([id]) => id === 'SessionsTable') ?? [];
    expect(sessions?.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
  });

  it('refers to key material only by SSM parameter name, and never gives it to the wrong function', () => {
    for (const fn of ['LoginLambdaFunction', 'RefreshLambdaFunction']) {
      expect(variablesOf(fn).SIGNING_KEYRING).toBe('ssm:/parcel-auth/prod/signing-keyring');
    }
    for (const fn of ['AuthorizerLambdaFunction', 'LogoutLambdaFunction', 'JwksLambdaFunction']) {
      expect(variablesOf(fn).SIGNING_KEYRING).toBeUndefined();
      expect(variablesOf(fn).VERIFICATION_KEYS).toBe('ssm:/parcel-auth/prod/jwks');
    }
    expect(templateText).not.toMatch(/PRIVATE KEY|"d"\s*:|"kty"/);
    // No password, secret or demo credential of any kind: the template has no business with one.
    expect(templateText).not.toMatch(/password|secret|demo/i);
  });
});

describe('the prod template with the stage’s own KMS key and X-Ray tracing (stage parameters)', () => {
  const of = (type: string) => ofType(type, customized.resources);
  type Policy = { PolicyDocument: { Statement: { Action: string[] }[] } };
  const kmsStatements = (roleId: string) =>
    ((customized.resources[roleId]?.Properties.Policies ?? []) as Policy[])
      .flatMap((policy) => policy.PolicyDocument.Statement)
      .filter((statement) => statement.Action.some((action) => action.startsWith('kms:')));

  it('lets exactly the two roles that read the keyring decrypt with exactly that key, through SSM only', () => {
    const decrypt = {
      Effect: 'Allow',
      Action: ['kms:Decrypt'],
      Resource: [KMS_KEY],
      Condition: {
        StringEquals: {
          'kms:ViaService': { 'Fn::Join': ['', ['ssm.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
        },
      },
    };
    const roles = Object.fromEntries(of('AWS::IAM::Role').map(([id]) => [id, kmsStatements(id)]));
    expect(roles).toEqual({
      LoginRole: [decrypt],
      RefreshRole: [decrypt],
      LogoutRole: [],
      JwksRole: [],
      AuthorizerRole: [],
      CreateShipmentRole: [],
      TrackShipmentRole: [],
    });
  });

  it('encrypts the alarm topic and every log group with that key', () => {
    expect(customized.resources.AlarmTopic?.Properties.KmsMasterKeyId).toBe(KMS_KEY);
    const groups = of('AWS::Logs::LogGroup');
    expect(groups).toHaveLength(9);
    for (const [id, group] of groups) expect(group.Properties.KmsKeyId, id).toBe(KMS_KEY);
  });

  it('traces the stage and every function, and lets every function write its traces', () => {
    expect(stageOf(customized.resources).TracingEnabled).toBe(true);
    for (const [id, fn] of of('AWS::Lambda::Function')) {
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
    }
    for (const [id, role] of of('AWS::IAM::Role')) {
      expect(role.Properties.ManagedPolicyArns, id).toEqual([
        {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/AWSXRayDaemonWriteAccess']],
        },
      ]);
    }
  });

  it('changes nothing else: the same resources as the default template', () => {
    expect(
      Object.keys(customized.resources)
        .filter((id) => !/Deployment|Version/.test(id))
        .sort(),
    ).toEqual(
      Object.keys(resources)
        .filter((id) => !/Deployment|Version/.test(id))
        .sort(),
    );
  });
});
