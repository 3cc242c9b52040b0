/**
 * `serverless package --stage prod` runs offline, without AWS credentials, and produces the
 * template we mean to deploy: checked here resource by resource.
 */
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzip } from '../../dev/bench/bundles.ts';
import { functionEnvironment, functionNames } from '../../infra/function-env.ts';
import { readStageParams } from '../../infra/stage-params.ts';
import { createDynamoAccountRepository, createDynamoAdministrations } from '../../lib/accounts/dynamodb.ts';
import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { createDynamoSecurityPolicies } from '../../lib/accounts/dynamodb-policies.ts';
import {
  createDynamoSessionTokenRevoker,
  createDynamoStatusReader,
} from '../../lib/accounts/dynamodb-status.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createAuditRecorder, createClientAuthAudit, logAuditFailure } from '../../lib/audit/recorder.ts';
import { createDynamoAuthorizationStore } from '../../lib/authorization/dynamodb.ts';
import { clientItem } from '../../lib/clients/dynamodb-items.ts';
import {
  createDynamoClientReader,
  createDynamoClientStatusReader,
  createDynamoClientTokenRevoker,
} from '../../lib/clients/dynamodb-readers.ts';
import { readCustomerApiConfig } from '../../lib/config.ts';
import {
  CONNECTION_ATTRIBUTES,
  connectionKey,
  createDynamoConnectionStatusReader,
  createDynamoConnectionStore,
} from '../../lib/connections/dynamodb.ts';
import { type Administrator, administratorOf } from '../../lib/customer/administrator.ts';
import { listAdministrators, setAdministrator } from '../../lib/customer/administrators.ts';
import {
  addSecret,
  auditEvents,
  createClient,
  getClient,
  listClients,
  removeClient,
  removeSecret,
  unlockClient,
  updateClient,
} from '../../lib/customer/clients.ts';
import {
  type CustomerConnectionDeps,
  endCustomerConnection,
  listConnections,
} from '../../lib/customer/connections.ts';
import { listPasskeys, type PasskeyDeps, registrationOptions } from '../../lib/customer/passkeys.ts';
import { readPolicy, setPolicy } from '../../lib/customer/security-policy.ts';
import { AppError } from '../../lib/errors.ts';
import { MAX_BODY_BYTES } from '../../lib/http/body.ts';
import { problemResponse } from '../../lib/http/problems.ts';
import { createLogger } from '../../lib/log.ts';
import { METRICS } from '../../lib/metrics/metrics.ts';
import { createDynamoChallengeStore, createDynamoPasskeyStore } from '../../lib/passkeys/dynamodb.ts';
import { relyingPartyOf } from '../../lib/passkeys/webauthn.ts';
import { ASSERTION_PREFIX, createDynamoReplayStore, DPOP_PREFIX } from '../../lib/replay/dynamodb.ts';
import { MAX_REVOKED_SESSIONS } from '../../lib/revocation/revocation.ts';
import { PROTECTED_ROUTES } from '../../lib/scopes.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import type { Caller } from '../../lib/tokens/claims.ts';
import { administrationDeps, administrationStores } from '../../lib/wiring/customer.ts';
import {
  alarmedMetrics,
  alarmMetricStats,
  dashboardOf,
  dimensionsOf,
  environmentOf,
  evaluateCondition,
  expectDashboardMetricsExist,
  expectServiceMetric,
  joined,
  matchesPath,
  metricsOfWidgets,
  parseLine,
  pathOf,
  type Resources,
  resourcesOfType,
  roleOf,
  stageOf,
  statementsOf,
  type Template,
} from '../support/cloudformation.ts';
import { allowingStatements, recordingClient, type Sent } from '../support/dynamodb-requests.ts';
import { CUSTOMER_ROUTES, methodArns } from '../support/routes.ts';
import { packageStage, removePackage } from '../support/template.ts';

let dir: string;
let templateText: string;
let resources: Resources;
const ofType = (type: string, from = resources) => resourcesOfType(from, type);
/** The default package's template as written, before its conditions are evaluated. */
let template: Template;
const variablesOf = (id: string) => environmentOf(resources, id);

beforeAll(async () => {
  ({ dir, templateText, resources, template } = await packageStage('default'));
});
afterAll(async () => {
  await removePackage('default', dir);
});

describe('the prod CloudFormation template', () => {
  it('runs every function on nodejs24.x, each from its own artifact', async () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual([
      'AuthorizerLambdaFunction',
      'ConsoleLambdaFunction',
      'CreateShipmentLambdaFunction',
      'CustomerApiLambdaFunction',
      'JwksLambdaFunction',
      'LoginExtendedLambdaFunction',
      'LoginLambdaFunction',
      'LogoutLambdaFunction',
      'OauthAuthorizeLambdaFunction',
      'OauthIntrospectLambdaFunction',
      'OauthMetadataLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthTokenLambdaFunction',
      'OauthWrongMethodLambdaFunction',
      'PasskeyLoginLambdaFunction',
      'RefreshLambdaFunction',
      'TrackShipmentLambdaFunction',
    ]);
    for (const [, fn] of functions) expect(fn.Properties.Runtime).toBe('nodejs24.x');
    const zips = (await readdir(dir)).filter((name) => name.endsWith('.zip'));
    expect(zips).toHaveLength(functions.length);
  });

  it('ships each function as one minified bundle, the AWS SDK inside, and nothing it does not run: the console’s three files in its zip alone', async () => {
    const consoleFiles = ['lib/console/console.css', 'lib/console/console.html', 'lib/console/console.js'];
    for (const zip of (await readdir(dir)).filter((name) => name.endsWith('.zip'))) {
      const files = unzip(await readFile(join(dir, zip)));
      const bundles = [...files.keys()].filter((name) => !consoleFiles.includes(name));
      expect(bundles).toEqual([expect.stringMatching(/^functions\/[\w-]+\.mjs$/)]);
      expect([...files.keys()].filter((name) => consoleFiles.includes(name)).sort()).toEqual(
        zip === 'console.zip' ? consoleFiles : [],
      );
      const bundle = files.get(bundles[0] ?? '')?.toString('utf8') ?? '';
      // Nothing left for node_modules to provide: no bare import but node: built-ins, and the
      // SDK's optional CRT signer, which it tries only for SigV4a (never used here).
      // (Not in a string: tsyringe's error message names `import "reflect-metadata"`.)
      const imports = [
        ...bundle.matchAll(/(?<=[}*\s]|^)from\s*"([^"]+)"|(?<!')\bimport\s*\(?\s*"([^"]+)"/gm),
      ].map((match) => match[1] ?? match[2] ?? '');
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
    expect(methods).toHaveLength(42);
    for (const [id, method] of methods) {
      // login, login-extended, token/refresh, logout, the key set, the OAuth token, revocation,
      // introspection and pushed authorization request endpoints (every method of each), the
      // authorization page, the metadata, the passkey sign-in and the console's page and assets
      // are public.
      const isPublic = /Login|Token|Logout|Jwks|Oauth|Console|PasskeyDashlogin/.test(id);
      expect(method.Properties.AuthorizationType, id).toBe(isPublic ? 'NONE' : 'CUSTOM');
      if (!isPublic) expect(method.Properties.AuthorizerId, id).toEqual({ Ref: authorizer?.[0] });
    }
    // The protected methods are exactly the routes of lib/scopes.json, whose scopes the authorizer checks.
    const protectedRoutes = methods
      .filter(([, m]) => m.Properties.AuthorizationType === 'CUSTOM')
      .map(([, m]) => `${String(m.Properties.HttpMethod)} ${pathOf(resources, m.Properties.ResourceId)}`)
      .sort();
    expect(protectedRoutes).toHaveLength(22);
    expect(protectedRoutes).toEqual(
      Object.values(PROTECTED_ROUTES)
        .map((route) => `${route.method.toUpperCase()} /${route.path}`)
        .sort(),
    );
    /** The function behind each method of a path. */
    const endpoint = (path: string) =>
      Object.fromEntries(
        methods
          .filter(([, m]) => pathOf(resources, m.Properties.ResourceId) === path)
          .map(([, m]) => [
            String(m.Properties.HttpMethod),
            /"([A-Za-z]+LambdaFunction)"/.exec(JSON.stringify(m.Properties.Integration))?.[1],
          ]),
      );
    expect(endpoint('/api/v1/oauth/token')).toEqual({
      POST: 'OauthTokenLambdaFunction',
      ANY: 'OauthWrongMethodLambdaFunction',
    });
    expect(endpoint('/api/v1/oauth/revoke')).toEqual({
      POST: 'OauthRevokeLambdaFunction',
      ANY: 'OauthWrongMethodLambdaFunction',
    });
    expect(endpoint('/api/v1/oauth/introspect')).toEqual({
      POST: 'OauthIntrospectLambdaFunction',
      ANY: 'OauthWrongMethodLambdaFunction',
    });
    // RFC 9126's pushed request, and the authorization page a browser opens (GET) and submits (POST).
    expect(endpoint('/api/v1/oauth/par')).toEqual({
      POST: 'OauthAuthorizeLambdaFunction',
      ANY: 'OauthWrongMethodLambdaFunction',
    });
    expect(endpoint('/api/v1/oauth/authorize')).toEqual({
      GET: 'OauthAuthorizeLambdaFunction',
      POST: 'OauthAuthorizeLambdaFunction',
    });
    // The administrators' routes: one function. The console: its page and its assets, GET only.
    const customerApi = 'CustomerApiLambdaFunction';
    expect(endpoint('/api/v1/customer/clients')).toEqual({ GET: customerApi, POST: customerApi });
    expect(endpoint('/api/v1/customer/clients/{clientId}')).toEqual({
      GET: customerApi,
      PATCH: customerApi,
      DELETE: customerApi,
    });
    expect(endpoint('/api/v1/customer/clients/{clientId}/secrets')).toEqual({ POST: customerApi });
    expect(endpoint('/api/v1/customer/clients/{clientId}/secrets/{secretId}')).toEqual({
      DELETE: customerApi,
    });
    expect(endpoint('/api/v1/customer/clients/{clientId}/unlock')).toEqual({ POST: customerApi });
    expect(endpoint('/api/v1/customer/audit-events')).toEqual({ GET: customerApi });
    // A username may hold `/`: the one to grant or revoke is in the body, never in the path.
    expect(endpoint('/api/v1/customer/administrators')).toEqual({ GET: customerApi, POST: customerApi });
    expect(endpoint('/api/v1/customer/administrators/revoke')).toEqual({ POST: customerApi });
    expect(endpoint('/api/v1/customer/connections')).toEqual({ GET: customerApi });
    expect(endpoint('/api/v1/customer/connections/{connectionId}')).toEqual({ DELETE: customerApi });
    expect(endpoint('/api/v1/customer/passkeys')).toEqual({ GET: customerApi, POST: customerApi });
    expect(endpoint('/api/v1/customer/passkeys/options')).toEqual({ POST: customerApi });
    expect(endpoint('/api/v1/customer/passkeys/{passkeyId}')).toEqual({ DELETE: customerApi });
    expect(endpoint('/api/v1/customer/security-policy')).toEqual({ GET: customerApi, PUT: customerApi });
    expect(endpoint('/api/v1/passkey-login')).toEqual({ POST: 'PasskeyLoginLambdaFunction' });
    expect(endpoint('/api/v1/passkey-login/options')).toEqual({ POST: 'PasskeyLoginLambdaFunction' });
    expect(endpoint('/console')).toEqual({ GET: 'ConsoleLambdaFunction' });
    expect(endpoint('/console/{asset}')).toEqual({ GET: 'ConsoleLambdaFunction' });
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

  it('gives each function exactly the environment lib/settings.ts composes for it, as the tests and the local stack get it', () => {
    for (const name of functionNames()) {
      const id = `${name.charAt(0).toUpperCase()}${name.slice(1)}LambdaFunction`;
      expect(variablesOf(id), name).toEqual(functionEnvironment(name, 'prod', {}));
    }
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

  it('indexes the accounts table by customer for the administrators’ lists, and lets no role read through the index what it may not read by key', () => {
    type KeySchema = { AttributeName: string; KeyType: string }[];
    const accounts = resources.AccountsTable?.Properties as {
      KeySchema: KeySchema;
      AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
      GlobalSecondaryIndexes?: { IndexName: string; KeySchema: KeySchema; Projection: unknown }[];
    };
    // lib/clients/dynamodb.ts listClients(customerId) and lib/accounts/dynamodb.ts
    // listAdministrators: one Query by customer and kind of item (the sort key).
    expect(accounts.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'byCustomer',
        KeySchema: [
          { AttributeName: 'customerId', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    // Every key attribute of the table and its index defined, as a string, and no other (CloudFormation).
    expect(accounts.AttributeDefinitions).toEqual(
      ['pk', 'sk', 'customerId'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    );
    for (const [id, table] of ofType('AWS::DynamoDB::Table').filter(([id]) => id !== 'AccountsTable')) {
      expect(table.Properties.GlobalSecondaryIndexes, id).toBeUndefined();
      expect(table.Properties.LocalSecondaryIndexes, id).toBeUndefined();
    }
    // The index holds every item with a customerId: clients, a platform's connections (in its
    // CLIENT# partition), and users (their password hashes and revoked sessions) and pickup
    // addresses too. A role that may query it is held to named attributes (a Query naming none
    // would read them all), and to those it may read by key anyway: a client's whole and a
    // connection's whole (both CLIENT# items), a user's in its GetItem's projection.
    const at = '2030-01-01T00:00:00.000Z';
    const client = clientItem({
      clientId: 'pcl_0123456789abcdef0123',
      customerId: 'C-1001',
      name: 'Warehouse',
      scopes: ['tracking:read'],
      enabled: true,
      secrets: [{ id: '0a1b2c3d', digest: 'digest', createdAt: at }],
      revokedBefore: 0,
      createdAt: at,
      updatedAt: at,
      lastUsedAt: at,
      dpopBoundAccessTokens: true,
    });
    const user = accountItems.user({
      username: 'Alice',
      passwordHash: '$2b$10$hash',
      enabled: true,
      customerId: 'C-1001',
      depot: { depotCode: 'D-1', addressesSeen: 1 },
      revokedBefore: 0,
      createdAt: at,
      updatedAt: at,
    });
    const address = accountItems.address({
      customerId: 'C-1001',
      position: 1,
      depotCode: 'D-1',
      createdAt: at,
    });
    // A connection item: every attribute lib/connections/dynamodb.ts approve and recordUse write.
    const connection = {
      ...connectionKey('pcl_0123456789abcdef0123', 'C-1001'),
      connectionId: 'con_0123456789abcdefghijkl',
      clientId: 'pcl_0123456789abcdef0123',
      customerId: 'C-1001',
      scopes: ['tracking:read'],
      approvedBy: 'Alice',
      approvedAt: at,
      lastUsedAt: at,
    };
    expect(Object.keys(connection).sort()).toEqual([...CONNECTION_ATTRIBUTES].sort());
    for (const item of [client, connection, user, address]) expect(typeof item.customerId).toBe('string');
    const index = '<AccountsTable.Arn>/index/byCustomer';
    const queriers = ofType('AWS::IAM::Role').filter(([id]) =>
      statementsOf(resources, id).some((statement) => statement.Resource.map(joined).includes(index)),
    );
    expect(queriers.map(([id]) => id)).toEqual(['CustomerApiRole']);
    for (const [id] of queriers) {
      const statements = statementsOf(resources, id);
      const onIndex = statements.filter((statement) => statement.Resource.map(joined).includes(index));
      expect(
        onIndex.map((statement) => statement.Action),
        id,
      ).toEqual([['dynamodb:Query']]);
      const condition = (onIndex[0]?.Condition ?? {}) as Record<string, Record<string, unknown>>;
      expect(condition.StringEqualsIfExists, id).toEqual({ 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' });
      const readable = (condition['ForAllValues:StringEquals']?.['dynamodb:Attributes'] ?? []) as string[];
      expect(readable.length, id).toBeGreaterThan(0);
      // What the role reads of a user item by key: its GetItem's projection.
      const userProjection = statements
        .filter(
          (statement) =>
            statement.Action.includes('dynamodb:GetItem') &&
            JSON.stringify(statement.Condition).includes('"USER#*"'),
        )
        .flatMap((statement) => {
          const attributes = (statement.Condition as Record<string, Record<string, unknown>>)[
            'ForAllValues:StringEquals'
          ]?.['dynamodb:Attributes'];
          return (attributes ?? Object.keys(user)) as string[];
        });
      // Any CLIENT# item whole: a client's, with what the revocations add (revokedTokens); and a
      // connection's, which the administrators' API reads through the index alone (its list):
      // nothing in one is a secret.
      const clientPartition = statements.filter(
        (statement) =>
          statement.Action.includes('dynamodb:GetItem') &&
          statement.Resource.map(joined).includes('<AccountsTable.Arn>') &&
          JSON.stringify(statement.Condition) ===
            JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } }),
      );
      expect(clientPartition, id).toHaveLength(1);
      const byKey = new Set([
        ...Object.keys(client),
        'revokedTokens',
        ...Object.keys(connection),
        ...userProjection,
      ]);
      expect(
        readable.filter((attribute) => !byKey.has(attribute)),
        id,
      ).toEqual([]);
      for (const secret of ['passwordHash', 'revokedSessions', 'depotCode', 'addressesSeen'])
        expect(readable, id).not.toContain(secret);
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
        login('~1api~1v1~1oauth~1token'),
        login('~1api~1v1~1oauth~1revoke'),
        login('~1api~1v1~1oauth~1introspect'),
        login('~1api~1v1~1oauth~1par'),
        login('~1api~1v1~1oauth~1authorize'),
        login('~1api~1v1~1passkey-login~1options'),
        login('~1api~1v1~1passkey-login'),
      ],
    });
  });

  describe('least privilege: one role per function', () => {
    /** `action on target` for every grant of a role, its log statement left out. */
    const grants = (roleId: string) =>
      statementsOf(resources, roleId)
        .filter((statement) => !statement.Action.every((action) => action.startsWith('logs:')))
        .flatMap((statement) =>
          statement.Action.flatMap((action) =>
            statement.Resource.map((resource) => {
              const text = JSON.stringify(resource);
              // A table's index: `<table>/index/<name>`.
              const index = /"\/index\/([^"]+)"/.exec(text)?.[1];
              const table = /"([A-Za-z]+Table)"/.exec(text)?.[1];
              const target =
                (table === undefined ? undefined : index === undefined ? table : `${table}/index/${index}`) ??
                /parameter\/[^"]+/.exec(text)?.[0] ??
                text;
              return `${action} on ${target}`;
            }),
          ),
        )
        .sort();

    it('gives every function a role of its own kind, and creates no shared role', () => {
      expect(ofType('AWS::IAM::Role').map(([id]) => id)).not.toContain('IamRoleLambdaExecution');
      expect(
        Object.fromEntries(ofType('AWS::Lambda::Function').map(([id]) => [id, roleOf(resources, id)])),
      ).toEqual({
        LoginLambdaFunction: 'LoginRole',
        LoginExtendedLambdaFunction: 'LoginRole',
        PasskeyLoginLambdaFunction: 'PasskeyLoginRole',
        RefreshLambdaFunction: 'RefreshRole',
        LogoutLambdaFunction: 'LogoutRole',
        JwksLambdaFunction: 'JwksRole',
        AuthorizerLambdaFunction: 'AuthorizerRole',
        CreateShipmentLambdaFunction: 'CreateShipmentRole',
        TrackShipmentLambdaFunction: 'TrackShipmentRole',
        OauthTokenLambdaFunction: 'OAuthTokenRole',
        OauthAuthorizeLambdaFunction: 'OAuthAuthorizeRole',
        OauthRevokeLambdaFunction: 'OAuthRevokeRole',
        OauthIntrospectLambdaFunction: 'OAuthIntrospectRole',
        OauthWrongMethodLambdaFunction: 'OAuthWrongMethodRole',
        OauthMetadataLambdaFunction: 'OAuthMetadataRole',
        CustomerApiLambdaFunction: 'CustomerApiRole',
        ConsoleLambdaFunction: 'ConsoleRole',
      });
    });

    it('allows no wildcard action and no wildcard resource', () => {
      for (const [id] of ofType('AWS::IAM::Role')) {
        for (const statement of statementsOf(resources, id)) {
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
        statementsOf(resources, roleId)
          .filter((statement) => statement.Action.every((action) => action.startsWith('logs:')))
          .flatMap((statement) => statement.Resource.map((resource) => JSON.stringify(resource)))
          .map((text) => /"([A-Za-z]+)LogGroup"/.exec(text)?.[1]);
      expect(logGroups('LoginRole')).toEqual(['Login', 'LoginExtended']);
      expect(logGroups('AuthorizerRole')).toEqual(['Authorizer']);
      expect(logGroups('TrackShipmentRole')).toEqual(['TrackShipment']);
      expect(logGroups('OAuthTokenRole')).toEqual(['OauthToken']);
      expect(logGroups('OAuthAuthorizeRole')).toEqual(['OauthAuthorize']);
      expect(logGroups('OAuthRevokeRole')).toEqual(['OauthRevoke']);
      expect(logGroups('OAuthIntrospectRole')).toEqual(['OauthIntrospect']);
      expect(logGroups('OAuthMetadataRole')).toEqual(['OauthMetadata']);
      expect(logGroups('OAuthWrongMethodRole')).toEqual(['OauthWrongMethod']);
      expect(logGroups('CustomerApiRole')).toEqual(['CustomerApi']);
      expect(logGroups('ConsoleRole')).toEqual(['Console']);
      // Every role: the log groups of the functions it runs, and no other.
      for (const [roleId] of ofType('AWS::IAM::Role')) {
        const own = ofType('AWS::Lambda::Function')
          .filter(([id]) => roleOf(resources, id) === roleId)
          .map(([id]) => id.replace(/LambdaFunction$/, ''));
        expect(logGroups(roleId).sort(), roleId).toEqual(own.sort());
      }
    });

    it('grants each function the actions its code makes, on its own tables and parameters', () => {
      const keyring = 'parameter/parcel-auth/prod/signing-keyring';
      const jwks = 'parameter/parcel-auth/prod/jwks';
      expect(grants('LoginRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
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
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          `ssm:GetParameter on ${keyring}`,
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      expect(grants('LogoutRole')).toEqual(
        [
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:UpdateItem on SessionsTable',
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      // A passkey sign-in: the user, its handle's alias and the passkey read; the passkey's
      // counter moved (PASSKEY# items, held below); a session and the challenge (webauthn#).
      expect(grants('PasskeyLoginRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          `ssm:GetParameter on ${keyring}`,
        ].sort(),
      );
      expect(grants('JwksRole')).toEqual([`ssm:GetParameter on ${jwks}`]);
      expect(grants('AuthorizerRole')).toEqual([
        'dynamodb:GetItem on AccountsTable',
        `ssm:GetParameter on ${jwks}`,
      ]);
      // The token endpoint's platform grants besides: codes and the connections' refresh sessions
      // (the sessions table), connections read, last used and ended (deleted), the key set
      // that verifies a refresh token, and private_key_jwt's spent assertions.
      expect(grants('OAuthTokenRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          // The customer's security policy (DPoP for shipments:write), in its projection.
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:DeleteItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          `ssm:GetParameter on ${keyring}`,
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      // PAR and the authorization page: a platform's authentication as the token endpoint's (its
      // audit of a customer's client that fails it included), a user's sign-in as a login's (its
      // hash upgrade included) or as a passkey sign-in's (its challenge spent, its counter
      // moved), requests and codes (the sessions table), the connection approved; the keyring
      // for the counters' secret only: it signs nothing.
      expect(grants('OAuthAuthorizeRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:GetItem on SessionsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          `ssm:GetParameter on ${keyring}`,
        ].sort(),
      );
      // Its accounts reads: a user whole (the password hash a sign-in checks) and a platform
      // whole (its secrets' digests); its sessions table items: requests and codes only, never
      // a refresh session, and a code written only.
      const conditionsOf = (roleId: string, table: string, action: string) =>
        statementsOf(resources, roleId)
          .filter(
            (statement) =>
              statement.Action.includes(action) && JSON.stringify(statement.Resource).includes(`"${table}"`),
          )
          .map((statement) => [statement.Action, statement.Condition]);
      expect(conditionsOf('OAuthAuthorizeRole', 'AccountsTable', 'dynamodb:GetItem')).toEqual([
        [
          ['dynamodb:GetItem'],
          {
            'ForAllValues:StringLike': {
              'dynamodb:LeadingKeys': ['USER#*', 'CLIENT#*', 'CUSTOMER#*', 'HANDLE#*', 'PASSKEY#*'],
            },
          },
        ],
      ]);
      const requests = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['authz#*'] } };
      const codes = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['code#*'] } };
      const challenges = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['webauthn#*', 'jti#*'] } };
      expect(
        statementsOf(resources, 'OAuthAuthorizeRole')
          .filter((statement) => JSON.stringify(statement.Resource).includes('"SessionsTable"'))
          .map((statement) => [statement.Action, statement.Condition]),
      ).toEqual([
        [['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], requests],
        [['dynamodb:PutItem'], codes],
        [['dynamodb:UpdateItem'], challenges],
      ]);
      expect(grants('OAuthMetadataRole')).toEqual([]);
      // The token endpoint's 405 answers every other method from nothing but its own code.
      expect(grants('OAuthWrongMethodRole')).toEqual([]);
      // The token endpoint reads client and connection items only (its writes are held below).
      expect(
        statementsOf(resources, 'OAuthTokenRole').find(
          (statement) =>
            statement.Action.includes('dynamodb:GetItem') &&
            JSON.stringify(statement.Resource).includes('"AccountsTable"'),
        )?.Condition,
      ).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*', 'CONNECTION#*'] } });
      // Revocation and introspection authenticate clients as the token endpoint does (the client
      // item, the throttle and its counter secret in the keyring, a spent assertion) and verify
      // tokens with the key set. A platform's refresh token revoked ends its connection: read,
      // listed, deleted.
      expect(grants('OAuthRevokeRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:DeleteItem on AccountsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          `ssm:GetParameter on ${keyring}`,
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      expect(grants('OAuthIntrospectRole')).toEqual(
        [
          // A client item whole, and a user item in the authorizer's projection: two statements.
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on SessionsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          `ssm:GetParameter on ${keyring}`,
          `ssm:GetParameter on ${jwks}`,
        ].sort(),
      );
      const accountReads = (roleId: string) =>
        statementsOf(resources, roleId)
          .filter(
            (statement) =>
              statement.Action.includes('dynamodb:GetItem') &&
              JSON.stringify(statement.Resource).includes('"AccountsTable"'),
          )
          .map((statement) => statement.Condition);
      // The revoker reads client and connection items only (its writes are held below).
      expect(accountReads('OAuthRevokeRole')).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*', 'CONNECTION#*'] } },
      ]);
      // The introspector reads a client item whole (client authentication reads its secrets'
      // digests), and a user item only in the authorizer's projection: never a password hash.
      expect(accountReads('OAuthIntrospectRole')).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } },
        {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*', 'CONNECTION#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': [
              'pk',
              'sk',
              'username',
              'enabled',
              'revokedBefore',
              'revokedSessions',
              'clientId',
              'connectionId',
              'customerId',
            ],
          },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      ]);
      // Each protected function spends the DPoP proofs of bound tokens (dpop#), nothing else there.
      const dpopSpend = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['dpop#*'] } };
      for (const role of ['CreateShipmentRole', 'TrackShipmentRole', 'CustomerApiRole'])
        expect(
          statementsOf(resources, role)
            .filter((statement) => JSON.stringify(statement.Resource).includes('"SessionsTable"'))
            .filter((statement) => JSON.stringify(statement.Condition).includes('dpop#'))
            .map((statement) => [statement.Action, statement.Condition]),
          role,
        ).toEqual([[['dynamodb:UpdateItem'], dpopSpend]]);
      expect(grants('CreateShipmentRole')).toEqual([
        'dynamodb:GetItem on ShipmentsTable',
        'dynamodb:PutItem on ShipmentsTable',
        'dynamodb:UpdateItem on SessionsTable',
      ]);
      // The authorizer reads user, client and connection items only, and only the attributes it
      // projects: never a hash (a client's revokedTokens: the tokens it revoked itself; a
      // connection's id: which one a platform's token of it must name).
      const read = statementsOf(resources, 'AuthorizerRole').find((statement) =>
        statement.Action.includes('dynamodb:GetItem'),
      );
      expect(read).toMatchObject({
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*', 'CLIENT#*', 'CONNECTION#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': [
              'pk',
              'sk',
              'username',
              'clientId',
              'enabled',
              'revokedBefore',
              'revokedSessions',
              'secrets',
              'revokedTokens',
              'connectionId',
              'customerId',
            ],
          },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      });
      expect(grants('TrackShipmentRole')).toEqual([
        'dynamodb:GetItem on ShipmentsTable',
        'dynamodb:UpdateItem on SessionsTable',
      ]);
      // The administrators' API: its customer's users' administration, its clients and connections
      // (their lists by the byCustomer index; a connection ended on its platform's item, then
      // deleted: CLIENT# items all), the clients' failed-authentication counters (unlock), the
      // audit trail, the keyring for the counters' secret (it signs nothing), and the caller's
      // passkeys (PASSKEY# items, the HANDLE# alias) with their challenges (webauthn#).
      expect(grants('CustomerApiRole')).toEqual(
        [
          // A user item in a projection, and its administration (below); a client item, whole.
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:PutItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:DeleteItem on AccountsTable',
          'dynamodb:DeleteItem on AccountsTable',
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:Query on AccountsTable',
          'dynamodb:PutItem on AccountsTable',
          'dynamodb:DeleteItem on AccountsTable',
          'dynamodb:PutItem on AccountsTable',
          'dynamodb:PutItem on SessionsTable',
          'dynamodb:UpdateItem on SessionsTable',
          // A DPoP-bound token's proof spent.
          'dynamodb:UpdateItem on SessionsTable',
          // The customer's security policy, read and set.
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:PutItem on AccountsTable',
          'dynamodb:Query on AccountsTable/index/byCustomer',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:DeleteItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          'dynamodb:DeleteItem on AuditTable',
          'dynamodb:Query on AuditTable',
          `ssm:GetParameter on ${keyring}`,
        ].sort(),
      );
      // The console's page and assets are files of its zip: it reads no AWS resource.
      expect(grants('ConsoleRole')).toEqual([]);
      // Every role is one of those above.
      expect(
        ofType('AWS::IAM::Role')
          .map(([id]) => id)
          .sort(),
      ).toEqual(
        [
          'LoginRole',
          'PasskeyLoginRole',
          'RefreshRole',
          'LogoutRole',
          'JwksRole',
          'AuthorizerRole',
          'OAuthTokenRole',
          'OAuthAuthorizeRole',
          'OAuthRevokeRole',
          'OAuthIntrospectRole',
          'OAuthMetadataRole',
          'OAuthWrongMethodRole',
          'CreateShipmentRole',
          'TrackShipmentRole',
          'CustomerApiRole',
          'ConsoleRole',
        ].sort(),
      );
    });

    it('lets the administrators’ API read a user item only in its projection and write only its administration, and touch only client items of the accounts table and client counters of the throttle table', () => {
      const accounts = { 'Fn::GetAtt': ['AccountsTable', 'Arn'] };
      const clientsOnly = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } };
      expect(statementsOf(resources, 'CustomerApiRole')).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: [{ 'Fn::GetAtt': ['CustomerApiLogGroup', 'Arn'] }],
        },
        // Is the caller still an administrator of the token's customer? Never a password hash.
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem'],
          Resource: [accounts],
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] },
            'ForAllValues:StringEquals': {
              'dynamodb:Attributes': [
                'pk',
                'sk',
                'username',
                'customerId',
                'enabled',
                'admin',
                'revokedBefore',
                'revokedSessions',
                'scopes',
                'adminEndingUntil',
                'passkeyHandle',
              ],
            },
            StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
          },
        },
        // An administration granted (on condition of a customer) or ended (marked, then ended
        // with the user's revocation cutoff): lib/accounts/dynamodb-users.ts setAdministrator,
        // markEnding, endMarked, unmark.
        {
          Effect: 'Allow',
          Action: ['dynamodb:UpdateItem'],
          Resource: [accounts],
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] },
            'ForAllValues:StringEquals': {
              'dynamodb:Attributes': [
                'pk',
                'sk',
                'username',
                'customerId',
                'admin',
                'updatedAt',
                'revokedBefore',
                'adminEnding',
                'adminEndingUntil',
                'passkeyHandle',
              ],
            },
            StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
          },
        },
        // A client is created whole, renamed, disabled, given and relieved of secrets, removed.
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
          Resource: [accounts],
          Condition: clientsOnly,
        },
        // A connection ended: its item deleted, connection items only.
        {
          Effect: 'Allow',
          Action: ['dynamodb:DeleteItem'],
          Resource: [accounts],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CONNECTION#*'] } },
        },
        // The customer's security policy, read on every call and written whole: its item only.
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
          Resource: [accounts],
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CUSTOMER#*'] },
            'ForAllValues:StringEquals': {
              'dynamodb:Attributes': [
                'pk',
                'sk',
                'administratorsRequirePasskey',
                'shipmentsWriteRequiresDpop',
                'updatedBy',
                'updatedAt',
              ],
            },
          },
        },
        // The caller's passkeys, a partition of their own: listed, registered whole, removed;
        // the handle's alias written once. Never a user item.
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
          Resource: [accounts],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PASSKEY#*'] } },
        },
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem'],
          Resource: [accounts],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['HANDLE#*'] } },
        },
        // A registration's challenge, written and spent; never a session.
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Resource: [{ 'Fn::GetAtt': ['SessionsTable', 'Arn'] }],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['webauthn#*'] } },
        },
        // A DPoP-bound token's proof spent (lib/dpop/binding.ts).
        {
          Effect: 'Allow',
          Action: ['dynamodb:UpdateItem'],
          Resource: [{ 'Fn::GetAtt': ['SessionsTable', 'Arn'] }],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['dpop#*'] } },
        },
        // The customer's clients and administrators: the index, never a Query or Scan of the
        // table but of the caller's passkeys' partition; the index holds users too, so in named
        // attributes only (held below).
        {
          Effect: 'Allow',
          Action: ['dynamodb:Query'],
          Resource: [{ 'Fn::Join': ['', [accounts, '/index/byCustomer']] }],
          Condition: {
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': expect.any(Array) },
            StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
          },
        },
        // Unlock: a client id's counter and its known sources' (CLIENT#<digest>[#<tag>]), never a
        // username's or an address's, and nothing counted (no PutItem).
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
          Resource: [{ 'Fn::GetAtt': ['LoginThrottleTable', 'Arn'] }],
          Condition: clientsOnly,
        },
        // Events recorded, a roll's scheduled expiry taken back, the customer's events read.
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
          Resource: [{ 'Fn::GetAtt': ['AuditTable', 'Arn'] }],
        },
        {
          Effect: 'Allow',
          Action: ['ssm:GetParameter'],
          Resource: [
            {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':ssm:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':parameter/parcel-auth/prod/signing-keyring',
                ],
              ],
            },
          ],
        },
      ]);
      expect(statementsOf(resources, 'ConsoleRole')).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: [{ 'Fn::GetAtt': ['ConsoleLogGroup', 'Arn'] }],
        },
      ]);
      // No other role queries or scans the accounts table or any index of it.
      for (const [id] of ofType('AWS::IAM::Role')) {
        const reads = grants(id).filter((grant) => /^dynamodb:(Query|Scan) on AccountsTable/.test(grant));
        expect(reads, id).toEqual(
          id === 'CustomerApiRole'
            ? ['dynamodb:Query on AccountsTable', 'dynamodb:Query on AccountsTable/index/byCustomer']
            : [],
        );
      }
    });

    it('allows every attribute, key and return value of the requests the code makes under those conditions', async () => {
      // The local stack does not enforce IAM: a request naming an attribute its role's
      // dynamodb:Attributes lacks would first fail on AWS. So the requests themselves, as the
      // code builds them, are held to the conditions here (a client that only writes them down).
      const { client, sentBy } = recordingClient();
      const tableName = 'parcel-auth-prod-accounts';
      /** Each request allowed by one of the role's statements for `action` at least. */
      const expectAllowed = (sent: Sent[], roleId: string, action: string) => {
        expect(sent.length, roleId).toBeGreaterThan(0);
        for (const request of sent) {
          expect(request.action).toBe(action);
          expect(request.request.TableName).toBe(tableName);
          const { allowing, refused } = allowingStatements(resources, roleId, request);
          expect(
            allowing.length,
            `${roleId} ${action} ${JSON.stringify(request.request)}: ${JSON.stringify(refused)}`,
          ).toBeGreaterThan(0);
        }
      };
      const repository = createDynamoAccountRepository({ client, tableName });
      expectAllowed(
        await sentBy(() => repository.upgradePasswordHash('Alice', '$2b$04$old', '$2b$10$new')),
        'LoginRole',
        'dynamodb:UpdateItem',
      );
      for (const role of ['RefreshRole', 'LogoutRole'])
        expectAllowed(
          await sentBy(() => repository.revokeSessionTokens('Alice', 'session-1', 2_000_000_000)),
          role,
          'dynamodb:UpdateItem',
        );
      // A user listing MAX_REVOKED_SESSIONS sessions already: its cutoff moves, the list goes.
      const full = recordingClient(({ request }) =>
        String(request.UpdateExpression).includes('if_not_exists(revokedSessions')
          ? {
              Attributes: {
                revokedSessions: Object.fromEntries(
                  Array.from({ length: MAX_REVOKED_SESSIONS }, (_, i) => [`s-${i}`, 2_000_000_000]),
                ),
              },
            }
          : {},
      );
      const cutoff = await full.sentBy(() =>
        createDynamoSessionTokenRevoker({ client: full.client, tableName }).revokeSessionTokens(
          'Alice',
          'session-2',
          2_000_000_000,
        ),
      );
      expect(cutoff.map((request) => String(request.request.UpdateExpression))).toEqual([
        expect.stringContaining('if_not_exists(revokedSessions'),
        expect.stringMatching(/^SET revokedBefore = :cutoff REMOVE revokedSessions$/),
      ]);
      for (const role of ['RefreshRole', 'LogoutRole']) expectAllowed(cutoff, role, 'dynamodb:UpdateItem');
      const userStatus = await sentBy(() =>
        createDynamoStatusReader({ client, tableName }).findStatus('Alice'),
      );
      const clientStatus = await sentBy(() =>
        createDynamoClientStatusReader({ client, tableName }).findClientStatus('pcl_0123456789abcdef0123'),
      );
      // Client authentication (the token endpoint, revocation and introspection): the client item whole.
      const clientRead = await sentBy(() =>
        createDynamoClientReader({ client, tableName }).findClient('pcl_0123456789abcdef0123'),
      );
      expectAllowed(userStatus, 'AuthorizerRole', 'dynamodb:GetItem');
      expectAllowed(clientStatus, 'AuthorizerRole', 'dynamodb:GetItem');
      for (const roleId of ['OAuthTokenRole', 'OAuthRevokeRole', 'OAuthIntrospectRole']) {
        expectAllowed(clientRead, roleId, 'dynamodb:GetItem');
      }
      // The grant's last-use write: a secret's lastUsedAt and the client's.
      const lastUse = await sentBy(() =>
        createDynamoClientReader({ client, tableName }).recordUse(
          'pcl_0123456789abcdef0123',
          '0a1b2c3d',
          new Date(),
        ),
      );
      expect(lastUse).toHaveLength(1);
      expectAllowed(lastUse, 'OAuthTokenRole', 'dynamodb:UpdateItem');
      // Revocation: its two writes of the client item's revokedTokens (make the map, then list
      // the token and drop expired entries; the recording client answers no entries).
      const revocation = await sentBy(() =>
        createDynamoClientTokenRevoker({ client, tableName }).revokeClientToken(
          'pcl_0123456789abcdef0123',
          'jti-1',
          2_000_000_000,
        ),
      );
      expect(revocation).toHaveLength(2);
      expectAllowed(revocation, 'OAuthRevokeRole', 'dynamodb:UpdateItem');
      // Introspection: the authorizer's revocation check, a user's status and a client's.
      expectAllowed(userStatus, 'OAuthIntrospectRole', 'dynamodb:GetItem');
      expectAllowed(clientStatus, 'OAuthIntrospectRole', 'dynamodb:GetItem');
      // The administrators' API's read of its caller, in the projection its role allows.
      expectAllowed(
        await sentBy(() => createDynamoAdministrations({ client, tableName }).findAdministration('Alice')),
        'CustomerApiRole',
        'dynamodb:GetItem',
      );
      // A read of a user item whole (a login's) is refused where a projection is the condition.
      expect(
        allowingStatements(resources, 'AuthorizerRole', {
          action: 'dynamodb:GetItem',
          request: { TableName: tableName, Key: { pk: 'USER#alice', sk: 'USER' } },
        }).allowing,
      ).toEqual([]);
    });

    it('holds the authorization endpoint’s, the platform grants’ and the connections’ requests to their roles, and lets the authorization endpoint and the token endpoint allow nothing on the accounts, sessions and audit tables their stores never send', async () => {
      // The stores as lib/wiring/authorize.ts, lib/wiring/oauth.ts and lib/wiring/customer.ts wire
      // them, each operation once, against a client that only writes the requests down.
      const tables = tableNames('prod');
      const { client, sentBy } = recordingClient();
      const accounts = { client, tableName: tables.accounts };
      const requests = createDynamoAuthorizationStore({ client, tableName: tables.sessions });
      const connections = createDynamoConnectionStore(accounts);
      const passkeyStore = createDynamoPasskeyStore(accounts);
      const challengeStore = createDynamoChallengeStore({ client, tableName: tables.sessions });
      // private_key_jwt's assertion, spent at PAR and at the token endpoint alike.
      const assertionSpent = await sentBy(() =>
        createDynamoReplayStore({ client, tableName: tables.sessions }, ASSERTION_PREFIX).spend(
          'pcl_0123456789abcdef0123',
          'jti-1',
          2_000_000_000,
          'spender-1',
        ),
      );
      const now = new Date();
      const clientId = 'pcl_0123456789abcdef0123';
      const connection = { clientId, customerId: 'C-1001', connectionId: 'con_0123456789abcdefghijkl' };
      const id = 'r'.repeat(43);
      const pending = {
        id,
        request: {
          clientId,
          redirectUri: 'https://platform.example/callback',
          scopes: ['tracking:read' as const],
          state: 'state-1',
          codeChallenge: 'c'.repeat(43),
        },
        platformName: 'Platform',
        expiresAt: 2_000_000_000,
        browser: 'browser-digest',
      };
      const code = {
        digest: 'd'.repeat(43),
        clientId,
        redirectUri: pending.request.redirectUri,
        codeChallenge: pending.request.codeChallenge,
        connectionId: connection.connectionId,
        customerId: connection.customerId,
        scopes: pending.request.scopes,
        approvedAt: 1_900_000_000,
        expiresAt: 2_000_000_000,
      };
      const failedAuthentication = await sentBy(() =>
        createClientAuthAudit(
          createAuditRecorder({
            trail: createDynamoAuditTrail({ client, tableName: tables.audit }),
            retentionSeconds: 86_400,
            metrics: { count: () => {} },
            warn: logAuditFailure(createLogger('error', () => {})),
          }),
        ).failedAuthentication({
          customerId: 'C-1001',
          clientId: 'pcl_00000000000000000001',
          sourceIp: '203.0.113.9',
          reason: 'bad secret',
        }),
      );
      const sessions = createDynamoSessionStore({ client, tableName: tables.sessions });
      const users = createDynamoAccountRepository(accounts);
      const clientRead = await sentBy(() => createDynamoClientReader(accounts).findClient(clientId));
      const sent: Record<string, Sent[]> = {
        // PAR and the page: the platform and the user read, the hash upgraded, the request pushed,
        // opened, read, signed in and decided, the connection approved, its code written.
        OAuthAuthorizeRole: [
          ...clientRead,
          ...(await sentBy(() => users.findByUsername('Alice'))),
          ...(await sentBy(() => users.upgradePasswordHash('Alice', '$2b$04$old', '$2b$10$new'))),
          ...(await sentBy(() => challengeStore.spend('c'.repeat(43), 'spender-1', now))),
          ...assertionSpent,
          ...(await sentBy(() => passkeyStore.findByHandle('h'.repeat(22), 'p'.repeat(22)))),
          ...(await sentBy(() =>
            passkeyStore.recordUse(
              {
                passkeyId: 'p'.repeat(22),
                username: 'Alice',
                name: 'Laptop',
                publicKey: 'k'.repeat(40),
                counter: 0,
                transports: [],
                backedUp: false,
                createdAt: now.toISOString(),
              },
              { to: 1, at: now.toISOString() },
            ),
          )),
          ...(await sentBy(() => requests.push(pending))),
          ...(await sentBy(() => requests.get(id, now))),
          ...(await sentBy(() => requests.open(id, pending.browser, 2_000_000_000, now))),
          ...(await sentBy(() =>
            requests.signIn(
              id,
              pending.browser,
              'next-browser-digest',
              { username: 'Alice', customerId: 'C-1001', at: 1_900_000_000, method: 'passkey' },
              now,
            ),
          )),
          ...(await sentBy(() => requests.decide(id, pending.browser, now))),
          ...(await sentBy(() =>
            connections.approve({
              clientId,
              customerId: 'C-1001',
              scopes: ['tracking:read'],
              approvedBy: 'Alice',
              at: now,
            }),
          )),
          ...(await sentBy(() => requests.createCode(code))),
          ...failedAuthentication,
        ],
        // The grants: the platform read and its secret's use, the code spent, the connection read,
        // its session started and rotated, its use recorded, and its end.
        OAuthTokenRole: [
          ...clientRead,
          ...(await sentBy(() => createDynamoClientReader(accounts).recordUse(clientId, '0a1b2c3d', now))),
          ...assertionSpent,
          // A DPoP proof spent, and the customer's policy read for a grant without one.
          ...(await sentBy(() =>
            createDynamoReplayStore({ client, tableName: tables.sessions }, DPOP_PREFIX).spend(
              'a'.repeat(43),
              'jti-1',
              2_000_000_000,
              'spender-1',
            ),
          )),
          ...(await sentBy(() => createDynamoSecurityPolicies(accounts).find('C-1001'))),
          ...(await sentBy(() => requests.redeemCode(code.digest, code, 'redemption-1', now))),
          ...(await sentBy(() => connections.find(clientId, 'C-1001'))),
          ...(await sentBy(() =>
            sessions.create({
              sessionId: 'conn#00000000-0000-4000-8000-000000000001',
              username: `connection:${connection.connectionId}`,
              createdAt: code.approvedAt,
              expiresAt: 2_000_000_000,
              currentJti: 'jti-1',
            }),
          )),
          ...(await sentBy(() =>
            sessions.refresh({
              sessionId: 'conn#00000000-0000-4000-8000-000000000001',
              username: `connection:${connection.connectionId}`,
              fromJti: 'jti-1',
              toJti: 'jti-2',
              now,
              extendTo: 2_000_000_000,
            }),
          )),
          ...(await sentBy(() => sessions.get('conn#00000000-0000-4000-8000-000000000001'))),
          ...(await sentBy(() => connections.recordUse(connection, now))),
          ...(await sentBy(() => connections.remove(connection))),
          ...failedAuthentication,
        ],
        // The administrators' connections: listed by the index, removed.
        CustomerApiRole: [
          ...(await sentBy(() => connections.listByCustomer('C-1001'))),
          ...(await sentBy(() => connections.remove(connection))),
        ],
        // A connection's access token: the authorizer and introspection read its connection.
        AuthorizerRole: [
          ...(await sentBy(() =>
            createDynamoConnectionStatusReader(accounts).findConnectionStatus(clientId, 'C-1001'),
          )),
        ],
        OAuthIntrospectRole: [
          ...(await sentBy(() =>
            createDynamoConnectionStatusReader(accounts).findConnectionStatus(clientId, 'C-1001', {
              consistent: true,
            }),
          )),
        ],
      };
      expect(sent.OAuthAuthorizeRole?.map((request) => request.action)).toEqual([
        'dynamodb:GetItem',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'dynamodb:PutItem',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'dynamodb:PutItem',
        'dynamodb:PutItem',
      ]);
      const used = new Set<string>();
      for (const [roleId, requestsOfRole] of Object.entries(sent)) {
        for (const request of requestsOfRole) {
          const { allowing, refused, arn } = allowingStatements(resources, roleId, request);
          expect(
            allowing.length,
            `${roleId} ${request.action} on ${arn} ${JSON.stringify(request.request)}: ${JSON.stringify(refused)}`,
          ).toBeGreaterThan(0);
          for (const statement of allowing)
            used.add(`${roleId} ${request.action} ${JSON.stringify(statement)}`);
        }
      }
      // Every DynamoDB action of the two roles' statements on these tables used by some request (the
      // login throttle's are a login's).
      for (const roleId of ['OAuthAuthorizeRole', 'OAuthTokenRole']) {
        const granted = statementsOf(resources, roleId)
          .filter((statement) =>
            /"(AccountsTable|SessionsTable|AuditTable)"/.test(JSON.stringify(statement.Resource)),
          )
          .flatMap((statement) =>
            statement.Action.map((action) => `${roleId} ${action} ${JSON.stringify(statement)}`),
          );
        expect(
          granted.filter((grant) => !used.has(grant)),
          roleId,
        ).toEqual([]);
      }
      // The authorization endpoint reaches no refresh session, and spends no code: the token endpoint's.
      for (const request of [
        ...(await sentBy(() => sessions.get('conn#00000000-0000-4000-8000-000000000001'))),
        ...(await sentBy(() => requests.redeemCode(code.digest, code, 'redemption-1', now))),
      ])
        expect(allowingStatements(resources, 'OAuthAuthorizeRole', request).allowing, request.action).toEqual(
          [],
        );
    });

    it('sends from the administrators’ API only requests its role allows, and its role allows nothing that API never sends', async () => {
      // lib/customer/administration.ts on the DynamoDB adapters, wired as lib/wiring/customer.ts
      // customerApiDeps wires them, every route's operation run once against a client that
      // answers with a customer's administrator, its clients, a locked counter and no events.
      const tables = tableNames('prod');
      const config = readCustomerApiConfig({
        ...variablesOf('CustomerApiLambdaFunction'),
        AWS_REGION: 'eu-central-1',
      });
      expect([config.accountsTable, config.loginThrottleTable, config.audit.table]).toEqual([
        tables.accounts,
        tables.loginThrottle,
        tables.audit,
      ]);
      const customerId = 'C-1001';
      const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
      const secret = (id: string, expiresAt?: string) => ({
        id,
        digest: `digest-${id}`,
        createdAt: at(-86_400),
        ...(expiresAt !== undefined && { expiresAt }),
      });
      // Two live secrets, one of them ending in an hour (its expiry scheduled in the trail); or
      // one live and one that ended (pruned by the next secret's write).
      const TWO_LIVE = 'pcl_00000000000000000001';
      const PLATFORM = 'pcl_00000000000000000009';
      const CONNECTION = 'con_0123456789abcdefghijkl';
      const clientOf = (clientId: string) =>
        clientItem({
          clientId,
          customerId,
          name: 'Warehouse',
          scopes: ['tracking:read'],
          enabled: true,
          secrets:
            clientId === TWO_LIVE
              ? [secret('0000000a'), secret('0000000b', at(3600))]
              : [secret('0000000c'), secret('0000000d', at(-60))],
          revokedBefore: 0,
          createdAt: at(-86_400),
          updatedAt: at(-3600),
        });
      const answer = ({ action, request }: Sent) => {
        const key = (request.Key ?? {}) as Record<string, string>;
        if (request.TableName === tables.accounts && action === 'dynamodb:GetItem') {
          // Each user is the customer's (Moved's moves to another between the read and the grant).
          const username = {
            'USER#alice': 'Alice',
            'USER#bob': 'Bob',
            'USER#carl': 'Carl',
            'USER#moved': 'Moved',
          }[String(key.pk)];
          // Alice and Carl administer; Bob and Moved do not yet.
          if (username !== undefined)
            return {
              Item: {
                username,
                customerId,
                enabled: true,
                admin: username === 'Alice' || username === 'Carl',
              },
            };
          return { Item: clientOf(String(key.pk).slice('CLIENT#'.length)) };
        }
        if (
          request.TableName === tables.accounts &&
          action === 'dynamodb:UpdateItem' &&
          key.pk === 'USER#moved' &&
          String(request.ConditionExpression).includes('customerId = :customer')
        )
          throw Object.assign(new Error('The conditional request failed'), {
            name: 'ConditionalCheckFailedException',
          });
        // A passkey's write sent again after its answer was lost: its condition fails, the item is read.
        if (
          action === 'dynamodb:PutItem' &&
          String((request.Item as Record<string, unknown> | undefined)?.pk).startsWith('PASSKEY#')
        )
          throw Object.assign(new Error('The conditional request failed'), {
            name: 'ConditionalCheckFailedException',
          });
        if (request.TableName === tables.accounts && action === 'dynamodb:Query') {
          const sk = String((request.ExpressionAttributeValues as Record<string, unknown>)[':sk']);
          if (sk === 'USER') return { Items: [{ username: 'Alice' }, { username: 'Carl' }] };
          // The customer's one connection, to the platform PLATFORM (read for its name).
          if (sk.startsWith('CONNECTION#'))
            return {
              Items: [
                {
                  ...connectionKey(PLATFORM, customerId),
                  connectionId: CONNECTION,
                  clientId: PLATFORM,
                  customerId,
                  scopes: ['tracking:read'],
                  approvedBy: 'Alice',
                  approvedAt: at(-3600),
                },
              ],
            };
          return { Items: [clientOf(TWO_LIVE)] };
        }
        // A client id's counter, locked, with a known source whose own counter goes on unlock.
        if (request.TableName === tables.loginThrottle && action === 'dynamodb:GetItem')
          return {
            Item: {
              counterKey: key.counterKey,
              period: 1,
              failures1: 5,
              lockedUntil: Date.now() + 60_000,
              known_tag1: Date.now() + 86_400_000,
            },
          };
        if (action === 'dynamodb:Query') return { Items: [] };
        return {};
      };
      const { client, sentBy } = recordingClient(answer);
      const deps = administrationDeps(
        administrationStores(client, config, async () => new Uint8Array(32).fill(7)),
        { logger: createLogger('error', () => {}), metrics: { count: () => {} }, clock: () => new Date() },
      );
      const caller: Caller = {
        subject: { kind: 'user', username: 'Alice' },
        customerId,
        scopes: ['tracking:read', 'shipments:write', 'customer:admin'],
        authTime: Math.floor(Date.now() / 1000),
        issuedAt: Math.floor(Date.now() / 1000),
      };
      const sent: Sent[] = [];
      const run = async (call: (admin: Administrator) => Promise<unknown>) => {
        sent.push(...(await sentBy(async () => call(await administratorOf(deps, caller, '203.0.113.9')))));
      };
      await run((admin) => listClients(deps, admin));
      await run((admin) => getClient(deps, admin, TWO_LIVE));
      await run((admin) => createClient(deps, admin, { name: 'Depot', scopes: ['tracking:read'] }));
      await run((admin) => updateClient(deps, admin, TWO_LIVE, { name: 'Depot 2', enabled: false }));
      await run((admin) => updateClient(deps, admin, 'pcl_00000000000000000002', { enabled: true }));
      await run((admin) =>
        addSecret(deps, admin, 'pcl_00000000000000000002', { expireOthersInSeconds: 600 }),
      );
      await run((admin) => removeSecret(deps, admin, TWO_LIVE, '0000000b'));
      await run((admin) => removeClient(deps, admin, TWO_LIVE));
      await run((admin) => unlockClient(deps, admin, TWO_LIVE));
      await run((admin) => auditEvents(deps, admin, { limit: 50 }));
      await run((admin) => listAdministrators(deps, admin));
      await run((admin) => setAdministrator(deps, admin, 'Bob', true));
      // Ending another's: Carl administers, and the administrators' list (the fake's Query)
      // holds Alice besides, so he is not the last: marked, Alice read, ended on the mark.
      await run((admin) => setAdministrator(deps, admin, 'Carl', false));
      // The customer's connections, as lib/wiring/customer.ts customerApiDeps wires them: listed
      // (the platform read for its name), and one ended (its id listed on the platform, the item
      // removed).
      const connectionDeps: CustomerConnectionDeps = {
        connections: createDynamoConnectionStore({ client, tableName: config.accountsTable }),
        platforms: deps.clients,
        recorder: deps.recorder,
        clock: () => new Date(),
        logger: deps.logger,
        metrics: deps.metrics,
      };
      await run((admin) => listConnections(connectionDeps, admin));
      await run((admin) => endCustomerConnection(connectionDeps, admin, CONNECTION));
      // The caller's passkeys, as customerApiDeps wires them: listed; a registration's options
      // (the user's handle made, its alias written, the challenge stored); a passkey stored,
      // removed, and a challenge spent (the store's own requests: a registration's answer needs
      // an authenticator, tests/e2e/passkeys.test.ts).
      const passkeyDeps: PasskeyDeps = {
        passkeys: createDynamoPasskeyStore({ client, tableName: config.accountsTable }),
        challenges: createDynamoChallengeStore({ client, tableName: config.sessionsTable }),
        recorder: deps.recorder,
        clock: () => new Date(),
        logger: deps.logger,
        metrics: deps.metrics,
      };
      await run((admin) => listPasskeys(passkeyDeps, admin));
      await run((admin) => registrationOptions(passkeyDeps, admin, relyingPartyOf('https://auth.example')));
      const passkey = {
        passkeyId: 'cGFzc2tleS1vZi1hbGljZQ',
        username: 'Alice',
        name: 'Laptop',
        publicKey: 'cHVibGljLWtleQ',
        counter: 0,
        transports: ['internal'],
        backedUp: true,
        createdAt: at(0),
      };
      sent.push(...(await sentBy(() => passkeyDeps.passkeys.add(passkey))));
      sent.push(...(await sentBy(() => passkeyDeps.passkeys.remove('Alice', passkey.passkeyId))));
      sent.push(
        ...(await sentBy(() => passkeyDeps.challenges.spend('Y2hhbGxlbmdlLW9mLWFsaWNl', 'r-1', new Date()))),
      );
      // The customer's security policy read (every call reads it) and set, by a passkey's session.
      await run((admin) => readPolicy(deps, admin));
      await run((admin) =>
        setPolicy(deps, { ...admin, signInMethod: 'passkey' }, { administratorsRequirePasskey: true }),
      );
      // A DPoP-bound token's proof spent, as customerApiDeps wires it (no client token reaches
      // these routes' scope, but the binding is checked before the scope).
      sent.push(
        ...(await sentBy(() =>
          createDynamoReplayStore({ client, tableName: config.sessionsTable }, DPOP_PREFIX).spend(
            'a'.repeat(43),
            'jti-1',
            2_000_000_000,
            'spender-1',
          ),
        )),
      );
      // An end refused after its mark takes the mark back.
      sent.push(...(await sentBy(() => deps.administrations.unmark('Carl', { id: 'end-1', until: 0 }))));
      // A grant whose condition failed: the user is no longer the customer's.
      await run(async (admin) => {
        await expect(setAdministrator(deps, admin, 'Moved', true)).rejects.toThrow(AppError);
      });
      // Every request allowed by a statement of the role.
      const used = new Set<string>();
      for (const request of sent) {
        const { allowing, refused, arn } = allowingStatements(resources, 'CustomerApiRole', request);
        expect(
          allowing.length,
          `${request.action} on ${arn} ${JSON.stringify(request.request)}: ${JSON.stringify(refused)}`,
        ).toBeGreaterThan(0);
        for (const statement of allowing) used.add(`${request.action} ${JSON.stringify(statement)}`);
      }
      // Every DynamoDB action of every statement used by some request.
      const granted = statementsOf(resources, 'CustomerApiRole').flatMap((statement) =>
        statement.Action.filter((action) => action.startsWith('dynamodb:')).map(
          (action) => `${action} ${JSON.stringify(statement)}`,
        ),
      );
      expect(granted.filter((grant) => !used.has(grant))).toEqual([]);
      expect(granted).toHaveLength(24);
    });

    it('lets login (and the authorization page’s sign-in) update only a user item’s password hash and the digest of the hash it replaced, a passkey sign-in only its passkey’s counter, refresh and logout only its revokedSessions and cutoff, revocation only a client item’s revokedTokens, the token endpoint only its last use and its connections’ ends, the authorization page only a connection’s approval, and the administrators’ API a user’s administration and client items', () => {
      const accountUpdates = (roleId: string) =>
        statementsOf(resources, roleId).filter(
          (statement) =>
            statement.Action.includes('dynamodb:UpdateItem') &&
            JSON.stringify(statement.Resource).includes('"AccountsTable"'),
        );
      // What the code writes (lib/accounts/dynamodb-users.ts): upgradePasswordHash sets
      // passwordHash and upgradedFromHash on condition of username and passwordHash;
      // lib/revocation/dynamodb.ts revokeSessionTokens sets revokedSessions (or, with it full,
      // moves revokedBefore) on condition of username, and createClientTokenRevoker sets a client
      // item's revokedTokens on condition of clientId.
      // The key attributes must be listed for DynamoDB to address the item at all; the return
      // values are limited to the attributes touched, so no other attribute can come back.
      const updateOf = (attributes: string[], leadingKey = 'USER#*') => ({
        Effect: 'Allow',
        Action: ['dynamodb:UpdateItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [leadingKey] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': attributes },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
        },
      });
      expect(accountUpdates('LoginRole')).toEqual([
        updateOf(['pk', 'sk', 'username', 'passwordHash', 'upgradedFromHash']),
      ]);
      const sessionTokens = updateOf(['pk', 'sk', 'username', 'revokedSessions', 'revokedBefore']);
      expect(accountUpdates('RefreshRole')).toEqual([sessionTokens]);
      expect(accountUpdates('LogoutRole')).toEqual([sessionTokens]);
      expect(accountUpdates('OAuthRevokeRole')).toEqual([
        updateOf(['pk', 'sk', 'clientId', 'revokedTokens'], 'CLIENT#*'),
      ]);
      // lib/clients/dynamodb.ts recordUse: a secret's lastUsedAt and the client's, on condition of
      // clientId; lib/connections/dynamodb.ts recordUse: a connection's lastUsedAt, on condition of
      // clientId and connectionId (an ended connection is deleted, held below).
      expect(accountUpdates('OAuthTokenRole')).toEqual([
        updateOf(['pk', 'sk', 'clientId', 'secrets', 'lastUsedAt'], 'CLIENT#*'),
        updateOf(['pk', 'sk', 'clientId', 'connectionId', 'lastUsedAt'], 'CONNECTION#*'),
      ]);
      // The authorization page: the login's hash upgrade, the passkey sign-in's counter, and
      // lib/connections/dynamodb.ts approve, a connection's attributes but its last use.
      expect(accountUpdates('OAuthAuthorizeRole')).toEqual([
        updateOf(['pk', 'sk', 'username', 'counter', 'lastUsedAt'], 'PASSKEY#*'),
        updateOf(['pk', 'sk', 'username', 'passwordHash', 'upgradedFromHash']),
        updateOf(
          ['pk', 'sk', 'connectionId', 'clientId', 'customerId', 'scopes', 'approvedBy', 'approvedAt'],
          'CONNECTION#*',
        ),
      ]);
      // The administrators' API writes a user's administration (lib/accounts/dynamodb-users.ts
      // setAdministrator: admin on condition of customerId; markEnding, endMarked, unmark: an
      // end's mark, and the end with the revocation cutoff) and client items (created whole).
      const clientItems = {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } },
      };
      expect(accountUpdates('CustomerApiRole')).toEqual([
        updateOf([
          'pk',
          'sk',
          'username',
          'customerId',
          'admin',
          'updatedAt',
          'revokedBefore',
          'adminEnding',
          'adminEndingUntil',
          'passkeyHandle',
        ]),
        clientItems,
      ]);
      // A passkey sign-in moves its passkey's counter and last use (lib/passkeys/dynamodb.ts
      // recordUse), in the passkeys' own partitions: never a user item.
      expect(accountUpdates('PasskeyLoginRole')).toEqual([
        updateOf(['pk', 'sk', 'username', 'counter', 'lastUsedAt'], 'PASSKEY#*'),
      ]);
      const writers = [
        'LoginRole',
        'PasskeyLoginRole',
        'RefreshRole',
        'LogoutRole',
        'OAuthRevokeRole',
        'OAuthTokenRole',
        'OAuthAuthorizeRole',
        'CustomerApiRole',
      ];
      const others = ofType('AWS::IAM::Role').filter(([id]) => !writers.includes(id));
      for (const [id] of others) expect(accountUpdates(id), id).toEqual([]);
      // Only the administrators' API puts or deletes an accounts item, and only a client's; it and
      // the token endpoint delete a connection they end (lib/connections/dynamodb.ts remove), in
      // the connections' own partitions, which IAM tells from every client item.
      const connectionDeletes = {
        Effect: 'Allow',
        Action: ['dynamodb:DeleteItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CONNECTION#*'] } },
      };
      // And the administrators' API its caller's passkeys and their handle's alias, each in
      // partitions of their own.
      const passkeyItems = {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PASSKEY#*'] } },
      };
      const handleAliases = {
        Effect: 'Allow',
        Action: ['dynamodb:PutItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['HANDLE#*'] } },
      };
      const policyItems = {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Resource: [{ 'Fn::GetAtt': ['AccountsTable', 'Arn'] }],
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CUSTOMER#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': [
              'pk',
              'sk',
              'administratorsRequirePasskey',
              'shipmentsWriteRequiresDpop',
              'updatedBy',
              'updatedAt',
            ],
          },
        },
      };
      const putsOrDeletesOf: Record<string, unknown[]> = {
        CustomerApiRole: [clientItems, connectionDeletes, policyItems, passkeyItems, handleAliases],
        OAuthTokenRole: [connectionDeletes],
        OAuthRevokeRole: [connectionDeletes],
      };
      for (const [id] of ofType('AWS::IAM::Role')) {
        const putsOrDeletes = statementsOf(resources, id).filter(
          (statement) =>
            statement.Action.some((action) => ['dynamodb:PutItem', 'dynamodb:DeleteItem'].includes(action)) &&
            JSON.stringify(statement.Resource).includes('"AccountsTable"'),
        );
        expect(putsOrDeletes, id).toEqual(putsOrDeletesOf[id] ?? []);
      }
    });

    it('lets the OAuth endpoints only add to the audit trail, the administrators’ API also take back a scheduled expiry and read it, and no other function touch it', async () => {
      const auditGrants = (roleId: string) =>
        grants(roleId).filter((grant) => grant.endsWith(' on AuditTable'));
      // PAR authenticates every client before it refuses one of a customer (a platform's alone
      // may push), so a customer's client failing there is audited as at the token endpoint
      // (lib/clients/client-auth.ts).
      const writers = ['OAuthTokenRole', 'OAuthAuthorizeRole', 'OAuthRevokeRole', 'OAuthIntrospectRole'];
      for (const roleId of writers)
        expect(auditGrants(roleId), roleId).toEqual(['dynamodb:PutItem on AuditTable']);
      // lib/audit/dynamodb.ts: append and schedule put, unschedule deletes, list queries one customer.
      expect(auditGrants('CustomerApiRole')).toEqual([
        'dynamodb:DeleteItem on AuditTable',
        'dynamodb:PutItem on AuditTable',
        'dynamodb:Query on AuditTable',
      ]);
      for (const [id] of ofType('AWS::IAM::Role').filter(
        ([id]) => ![...writers, 'CustomerApiRole'].includes(id),
      ))
        expect(auditGrants(id), id).toEqual([]);
      // No function scans the trail (every customer's events): the operators' CLI alone does.
      for (const [id] of ofType('AWS::IAM::Role'))
        expect(
          grants(id).filter((grant) => grant.startsWith('dynamodb:Scan')),
          id,
        ).toEqual([]);
      // What the functions' recorder sends for a failure: one PutItem of the event, nothing else.
      const { client, sentBy } = recordingClient();
      const tableName = tableNames('prod').audit;
      const audit = createClientAuthAudit(
        createAuditRecorder({
          trail: createDynamoAuditTrail({ client, tableName }),
          retentionSeconds: 86_400,
          metrics: { count: () => {} },
          warn: logAuditFailure(createLogger('error', () => {})),
        }),
      );
      const sent = await sentBy(() =>
        audit.failedAuthentication({
          customerId: 'C-1001',
          clientId: 'pcl_0123456789abcdef0123',
          sourceIp: '203.0.113.9',
          reason: 'bad secret',
        }),
      );
      expect(sent.map(({ action, request }) => [action, Object.keys(request).sort()])).toEqual([
        ['dynamodb:PutItem', ['Item', 'TableName']],
      ]);
      expect(sent[0]?.request.TableName).toBe(tableName);
    });
  });

  it('keeps every function’s logs and the access log for the stage’s retention', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    const ofFunctions = ofType('AWS::Lambda::Function').map(([id]) =>
      id.replace(/LambdaFunction$/, 'LogGroup'),
    );
    expect(groups.map(([id]) => id).sort()).toEqual([...ofFunctions, 'ApiAccessLogGroup'].sort());
    expect(groups).toHaveLength(18);
    expect(resources.CustomerApiLogGroup?.Properties.LogGroupName).toBe(
      '/aws/lambda/parcel-auth-prod-customerApi',
    );
    expect(resources.ConsoleLogGroup?.Properties.LogGroupName).toBe('/aws/lambda/parcel-auth-prod-console');
    expect(resources.OauthWrongMethodLogGroup?.Properties.LogGroupName).toBe(
      '/aws/lambda/parcel-auth-prod-oauthWrongMethod',
    );
    expect(resources.OauthRevokeLogGroup?.Properties.LogGroupName).toBe(
      '/aws/lambda/parcel-auth-prod-oauthRevoke',
    );
    expect(resources.OauthIntrospectLogGroup?.Properties.LogGroupName).toBe(
      '/aws/lambda/parcel-auth-prod-oauthIntrospect',
    );
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

  it('keeps the log groups and the alarm topic on the AWS-managed keys unless the stage names its own', () => {
    for (const [id, group] of ofType('AWS::Logs::LogGroup'))
      expect(group.Properties.KmsKeyId, id).toBeUndefined();
    expect(resources.AlarmTopic?.Properties.KmsMasterKeyId).toBeUndefined();
    // The keyring's own key grants its users in its key policy: no role names it.
    expect(JSON.stringify(ofType('AWS::IAM::Role'))).not.toContain('kms:');
  });

  describe('the keyring’s own KMS key', () => {
    type KeyStatement = {
      Effect: string;
      Principal: { AWS: unknown };
      Action: string[];
      Resource: string;
      Condition?: Record<string, Record<string, unknown>>;
    };
    const statements = () =>
      (resources.KeyringKey?.Properties.KeyPolicy as { Statement: KeyStatement[] } | undefined)?.Statement ??
      [];
    /** A principal as text; the operators' role is the stage parameter inside a Fn::Sub. */
    const principalsOf = (statement: KeyStatement) =>
      [statement.Principal.AWS]
        .flat()
        .map((principal) => (principal as { 'Fn::Sub'?: string })['Fn::Sub'] ?? joined(principal))
        .sort();
    /** Whatever encrypts, decrypts or lets someone else do so (a grant). */
    const USAGE = /^kms:(Encrypt|Decrypt|ReEncrypt|GenerateDataKey|CreateGrant|\*)/;
    const keyring =
      'arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/parcel-auth/prod/signing-keyring';

    it('is the stack’s own on prod: rotated every year, kept when the stack goes, named by the alias the admin CLI writes with', () => {
      expect(resources.KeyringKey).toMatchObject({
        Type: 'AWS::KMS::Key',
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: { EnableKeyRotation: true, KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' },
      });
      expect(resources.KeyringKeyAlias).toMatchObject({
        Type: 'AWS::KMS::Alias',
        Properties: { AliasName: 'alias/parcel-auth-prod-keyring', TargetKeyId: { Ref: 'KeyringKey' } },
      });
      // `keys init --stage prod` and `keys rotate --stage prod` encrypt with this alias.
      expect(readStageParams('prod').kmsKeyArn).toBe('alias/parcel-auth-prod-keyring');
    });

    it('lets only the signing roles and those that authenticate or unlock clients decrypt, and the operators’ role write, the keyring only, through SSM only', () => {
      const usage = statements().filter((statement) => statement.Action.some((action) => USAGE.test(action)));
      expect(
        Object.fromEntries(usage.map((statement) => [principalsOf(statement).join(' '), statement.Action])),
      ).toEqual({
        // Revocation, introspection, the authorization endpoint and the administrators' API (its
        // unlock) sign nothing: the login throttle's counter secret is in the keyring.
        '<CustomerApiRole.Arn> <LoginRole.Arn> <OAuthAuthorizeRole.Arn> <OAuthIntrospectRole.Arn> <OAuthRevokeRole.Arn> <OAuthTokenRole.Arn> <PasskeyLoginRole.Arn> <RefreshRole.Arn>':
          ['kms:Decrypt'],
        'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/parcel-auth-operator': [
          'kms:Encrypt',
          'kms:Decrypt',
        ],
      });
      // The roles that decrypt are exactly those allowed to read the keyring parameter.
      const keyringReaders = ofType('AWS::IAM::Role')
        .filter(([id]) =>
          statementsOf(resources, id).some(
            (statement) =>
              statement.Action.includes('ssm:GetParameter') &&
              statement.Resource.map(joined).includes(keyring),
          ),
        )
        .map(([id]) => `<${id}.Arn>`)
        .sort();
      const decrypting = usage.find((statement) => !statement.Action.includes('kms:Encrypt'));
      expect(decrypting === undefined ? [] : principalsOf(decrypting)).toEqual(keyringReaders);
      for (const statement of usage) {
        expect(statement.Effect).toBe('Allow');
        expect(
          Object.fromEntries(
            Object.entries(statement.Condition?.StringEquals ?? {}).map(([key, value]) => [
              key,
              joined(value),
            ]),
          ),
        ).toEqual({
          'kms:ViaService': 'ssm.<AWS::Region>.amazonaws.com',
          'kms:EncryptionContext:PARAMETER_ARN': keyring,
        });
        expect(Object.keys(statement.Condition ?? {})).toEqual(['StringEquals']);
      }
    });

    it('lets the account administer the key, so CloudFormation can manage it, but never use it', () => {
      const others = statements().filter(
        (statement) => !statement.Action.some((action) => USAGE.test(action)),
      );
      expect(others.map(principalsOf)).toEqual([['arn:<AWS::Partition>:iam::<AWS::AccountId>:root']]);
      const actions = others[0]?.Action ?? [];
      expect(actions).toEqual(
        expect.arrayContaining([
          'kms:DescribeKey',
          'kms:PutKeyPolicy',
          'kms:GetKeyPolicy',
          'kms:EnableKeyRotation',
          'kms:TagResource',
          'kms:CreateAlias',
          'kms:ScheduleKeyDeletion',
        ]),
      );
      // No wildcard, which could include a use of the key (kms:Create* holds kms:CreateGrant).
      for (const action of actions) expect(action).not.toContain('*');
    });
  });

  it('lets API Gateway invoke each function only for its own method and path, and the authorizer only as the authorizer', () => {
    /** Each function's source ARNs, sorted: one per route (a function may serve several). */
    const byFunction = (entries: [string, string][]) => {
      const grouped: Record<string, string[]> = {};
      for (const [fn, arn] of entries) grouped[fn] = [...(grouped[fn] ?? []), arn].sort();
      return grouped;
    };
    const permissions = ofType('AWS::Lambda::Permission').map(([, permission]) => permission.Properties);
    for (const permission of permissions) {
      expect(permission).toMatchObject({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
      });
    }
    const api = 'arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<ApiGatewayRestApi>';
    const routes: [string, string][] = [
      ['AuthorizerLambdaFunction', `${api}/authorizers/<AuthorizerApiGatewayAuthorizer>`],
    ];
    /** Every route: its function, and its method and path as a request's source ARN names them. */
    const requests: { fn: string; path: string; arns: (stage: string) => string[] }[] = [];
    for (const [, method] of ofType('AWS::ApiGateway::Method')) {
      const target = JSON.stringify(method.Properties.Integration);
      const fn = /"([A-Za-z]+LambdaFunction)"/.exec(target)?.[1] ?? target;
      const path = pathOf(resources, method.Properties.ResourceId).replace(/\{[^}]+\}/g, '*');
      // API Gateway invokes an ANY method with the request's own method in the source ARN: a
      // permission for the literal `ANY` never matches (every call would fail), so `*`.
      const verb = String(method.Properties.HttpMethod).replace(/^ANY$/, '*');
      routes.push([fn, `${api}/prod/${verb}${path}`]);
      const verbs = verb === '*' ? ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] : [verb];
      requests.push({
        fn,
        path,
        arns: (stage) => verbs.map((v) => `${api}/${stage}/${v}${path.replaceAll('*', 'x1')}`),
      });
    }
    const expected = byFunction(routes);
    expect(Object.keys(expected)).toHaveLength(17);
    // Each OAuth endpoint's POST function, and the 405 for any method of the four paths; the
    // authorization page, GET and POST, is the pushed request's function.
    expect(expected.OauthTokenLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/token`]);
    expect(expected.OauthRevokeLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/revoke`]);
    expect(expected.OauthIntrospectLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/introspect`]);
    const wrongMethodPaths = ['introspect', 'par', 'revoke', 'token'];
    expect(expected.OauthWrongMethodLambdaFunction).toEqual(
      wrongMethodPaths.map((endpoint) => `${api}/prod/*/api/v1/oauth/${endpoint}`),
    );
    expect(expected.OauthAuthorizeLambdaFunction).toEqual(
      [
        `${api}/prod/GET/api/v1/oauth/authorize`,
        `${api}/prod/POST/api/v1/oauth/authorize`,
        `${api}/prod/POST/api/v1/oauth/par`,
      ].sort(),
    );
    // The administrators' API: its twelve routes, each by its own method; the console: GET of its page and assets.
    expect(expected.CustomerApiLambdaFunction).toEqual(methodArns(`${api}/prod`, CUSTOMER_ROUTES).sort());
    expect(expected.ConsoleLambdaFunction).toEqual([`${api}/prod/GET/console`, `${api}/prod/GET/console/*`]);
    const granted = byFunction(
      permissions.map((permission) => [
        joined((permission.FunctionName as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]),
        joined(permission.SourceArn),
      ]),
    );
    /** ArnLike: `*` any run of characters, `/` included. */
    const arnLike = (pattern: string, arn: string) =>
      new RegExp(
        `^${pattern
          .split('*')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ).test(arn);
    expect(Object.keys(granted).sort()).toEqual(Object.keys(expected).sort());
    // A function of one route: exactly that route. The framework gives a function one permission
    // whatever its routes (infra/invoke-permissions.yml narrows it, and adds the others), so a
    // function of several may have a pattern instead (the authorization page's: any method of its
    // path). The 405 has one permission per path it serves: a pattern for the paths under
    // /api/v1/oauth/ would reach the authorization page's too.
    const single = Object.keys(expected).filter((fn) => expected[fn]?.length === 1);
    expect(Object.fromEntries(single.map((fn) => [fn, granted[fn]]))).toEqual(
      Object.fromEntries(single.map((fn) => [fn, expected[fn]])),
    );
    expect(granted.OauthWrongMethodLambdaFunction).toEqual(expected.OauthWrongMethodLambdaFunction);
    expect(granted.OauthAuthorizeLambdaFunction).toEqual([
      `${api}/prod/*/api/v1/oauth/authorize`,
      `${api}/prod/POST/api/v1/oauth/par`,
    ]);
    // Whatever its form, a function's permission matches each of its routes on this stage, and
    // no route of a path it does not serve, nor any route on another stage (not `/*/*`).
    for (const [fn, patterns = []] of Object.entries(granted).filter(
      ([fn]) => fn !== 'AuthorizerLambdaFunction',
    )) {
      const allowed = (arn: string) => patterns.some((pattern) => arnLike(pattern, arn));
      const ownPaths = new Set(requests.filter((r) => r.fn === fn).map((r) => r.path));
      for (const request of requests) {
        for (const arn of request.arns('prod')) {
          if (request.fn === fn) expect(allowed(arn), `${fn} refuses ${arn}`).toBe(true);
          else if (!ownPaths.has(request.path)) expect(allowed(arn), `${fn} allows ${arn}`).toBe(false);
        }
        for (const stage of ['dev', 'test-invoke-stage'])
          for (const arn of request.arns(stage)) expect(allowed(arn), `${fn} allows ${arn}`).toBe(false);
      }
    }
    const wrongMethod = (arn: string) =>
      (granted.OauthWrongMethodLambdaFunction ?? []).some((pattern) => arnLike(pattern, arn));
    for (const endpoint of wrongMethodPaths) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']) {
        const arn = `${api}/prod/${method}/api/v1/oauth/${endpoint}`;
        expect(wrongMethod(arn), arn).toBe(true);
      }
    }
    for (const arn of [
      `${api}/prod/GET/.well-known/oauth-authorization-server`,
      `${api}/prod/POST/api/v1/login`,
      `${api}/prod/GET/api/v1/tracking/1`,
      `${api}/prod/GET/api/v1/oauth/authorize`,
      `${api}/prod/POST/api/v1/oauth/authorize`,
      `${api}/dev/GET/api/v1/oauth/token`,
    ]) {
      expect(wrongMethod(arn), arn).toBe(false);
    }
  });

  it('alarms on 5xx rate, function errors, authorizer failures, throttles, failed logins and client authentications, lockouts, refresh-token reuse, lost audit events and bursts of credentials shown, to the stage topic', () => {
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm'));
    expect(Object.keys(alarms).sort()).toEqual([
      'Api5xxRateAlarm',
      'AuditWriteFailedAlarm',
      'AuthorizerFailureAlarm',
      'CredentialsShownAlarm',
      'FailedClientAuthAlarm',
      'FailedLoginsAlarm',
      'FunctionErrorsAlarm',
      'LockoutsAlarm',
      'OtherFunctionErrorsAlarm',
      'OtherThrottlesAlarm',
      'RefreshReuseAlarm',
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
    /** The functions (`<LogicalId>`) whose AWS/Lambda metric `name` the alarms read. */
    const functionsRead = (name: string, alarmIds = Object.keys(alarms)) =>
      alarmIds
        .flatMap((id) => alarmMetricStats(resources, id))
        .filter((metric) => metric.Namespace === 'AWS/Lambda' && metric.MetricName === name)
        .map((metric) => joined(metric.Dimensions?.find((d) => d.Name === 'FunctionName')?.Value ?? ''))
        .sort();
    const functions = ofType('AWS::Lambda::Function')
      .map(([id]) => `<${id}>`)
      .sort();
    // Two alarms of each, as one alarm reads at most 10 metrics (below): the functions that take
    // credentials or client secrets or hand them out (the administrators' API), and the others.
    const credentials = [
      'LoginLambdaFunction',
      'LoginExtendedLambdaFunction',
      'RefreshLambdaFunction',
      'LogoutLambdaFunction',
      'OauthTokenLambdaFunction',
      'OauthAuthorizeLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
      'CustomerApiLambdaFunction',
    ];
    const others = [
      'OauthMetadataLambdaFunction',
      'OauthWrongMethodLambdaFunction',
      'JwksLambdaFunction',
      'CreateShipmentLambdaFunction',
      'TrackShipmentLambdaFunction',
      'ConsoleLambdaFunction',
      // A passkey's assertion is no secret: nothing a leak of it could replay.
      'PasskeyLoginLambdaFunction',
    ];
    const ids = (logicalIds: string[]) => logicalIds.map((id) => `<${id}>`).sort();
    expect(functionsRead('Errors', ['FunctionErrorsAlarm'])).toEqual(ids(credentials));
    expect(functionsRead('Errors', ['OtherFunctionErrorsAlarm'])).toEqual(ids(others));
    expect(functionsRead('Throttles', ['ThrottlesAlarm'])).toEqual(
      ids([...credentials, 'AuthorizerLambdaFunction']),
    );
    expect(functionsRead('Throttles', ['OtherThrottlesAlarm'])).toEqual(ids(others));
    // Every function's errors but the authorizer's (its deliberate `Unauthorized` errors are not
    // function errors), each read by exactly one alarm; every function's throttles, the
    // authorizer's included, each read by exactly one alarm.
    expect(functionsRead('Errors')).toEqual(functions.filter((id) => id !== '<AuthorizerLambdaFunction>'));
    expect(functionsRead('Throttles')).toEqual(functions);
    for (const id of [
      'FunctionErrorsAlarm',
      'OtherFunctionErrorsAlarm',
      'ThrottlesAlarm',
      'OtherThrottlesAlarm',
    ]) {
      expect(alarms[id]?.Properties, id).toMatchObject({
        EvaluationPeriods: 1,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      // Each reads its own kind of metric only, every one summed over the same 5 minutes.
      const kind = /Errors/.test(id) ? 'Errors' : 'Throttles';
      for (const metric of alarmMetricStats(resources, id)) {
        expect([metric.Namespace, metric.MetricName], id).toEqual(['AWS/Lambda', kind]);
      }
    }
    // An alarm on metric math watches the sum of every metric it reads, and reads at most 10:
    // CloudWatch's hard limit (PutMetricAlarm takes at most 10 MetricStat queries).
    for (const [id, alarm] of Object.entries(alarms)) {
      const queries = alarm.Properties.Metrics as
        | { Id: string; Expression?: string; ReturnData?: boolean; MetricStat?: unknown }[]
        | undefined;
      if (queries === undefined) continue;
      const read = queries.filter((query) => query.MetricStat !== undefined).map((query) => query.Id);
      expect(read.length, id).toBeLessThanOrEqual(10);
      const watched = queries.filter((query) => query.ReturnData !== false);
      expect(watched, id).toHaveLength(1);
      const summed = /^SUM\(\[(.*)\]\)$/.exec(watched[0]?.Expression ?? '')?.[1]?.split(/,\s*/);
      expect(summed?.sort(), id).toEqual(read.sort());
    }

    expect(alarmedMetrics(resources, 'FailedLoginsAlarm')).toEqual(
      METRICS.LoginFailed.reason.map((reason) => `parcel-auth LoginFailed{reason=${reason}}`),
    );
    expect(alarms.FailedLoginsAlarm?.Properties).toMatchObject({ Threshold: 200 });
    expect(alarmedMetrics(resources, 'FailedClientAuthAlarm')).toEqual(
      METRICS.ClientAuthFailed.reason.map((reason) => `parcel-auth ClientAuthFailed{reason=${reason}}`),
    );
    expect(alarms.FailedClientAuthAlarm?.Properties).toMatchObject({ Threshold: 20 });
    expect(alarmedMetrics(resources, 'LockoutsAlarm')).toEqual(
      METRICS.LockoutStarted.counter.map((counter) => `parcel-auth LockoutStarted{counter=${counter}}`),
    );
    expect(alarms.LockoutsAlarm?.Properties).toMatchObject({ Threshold: 10 });
    expect(alarmedMetrics(resources, 'RefreshReuseAlarm')).toEqual(['parcel-auth RefreshReuseDetected']);
    // Any lost audit event; and the changes that show a new secret, summed, over the stage's threshold.
    expect(alarmedMetrics(resources, 'AuditWriteFailedAlarm')).toEqual(['parcel-auth AuditWriteFailed']);
    expect(alarms.AuditWriteFailedAlarm?.Properties).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(alarmedMetrics(resources, 'CredentialsShownAlarm')).toEqual(
      ['client.created', 'client.secret.added', 'client.secret.rolled'].map(
        (type) => `parcel-auth CredentialChanged{type=${type}}`,
      ),
    );
    expect(alarms.CredentialsShownAlarm?.Properties).toMatchObject({
      Threshold: 20,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(alarmedMetrics(resources, 'AuthorizerFailureAlarm')).toEqual([
      'parcel-auth AuthorizerUnavailable',
      'parcel-auth/prod AuthorizerTimeouts',
    ]);
  });

  it('reads the service’s metrics from its EMF lines, and only the authorizer’s timeouts from its log', () => {
    const filters = ofType('AWS::Logs::MetricFilter');
    expect(filters.map(([id, filter]) => [id, filter.Properties])).toEqual([
      [
        'AuthorizerTimeoutMetricFilter',
        expect.objectContaining({
          LogGroupName: { Ref: 'AuthorizerLogGroup' },
          FilterPattern: '"Task timed out"',
          MetricTransformations: [expect.objectContaining({ MetricNamespace: 'parcel-auth/prod' })],
        }),
      ],
    ]);
    // Every metric of the service an alarm reads is one the functions write, on this stage,
    // with dimension values they use.
    for (const [id] of ofType('AWS::CloudWatch::Alarm')) {
      for (const metric of alarmMetricStats(resources, id).filter((m) => m.Namespace === 'parcel-auth')) {
        expectServiceMetric(metric.MetricName, dimensionsOf(metric.Dimensions), id);
      }
    }
  });

  it('gives the login functions, the authorization page (whose sign-in is a login’s), and the administrators’ API (whose unlock reads the locks), the brute-force limits of the stage', () => {
    for (const fn of [
      'LoginLambdaFunction',
      'LoginExtendedLambdaFunction',
      'OauthAuthorizeLambdaFunction',
      'CustomerApiLambdaFunction',
    ]) {
      expect(variablesOf(fn)).toMatchObject({
        LOGIN_THROTTLE_TABLE: 'parcel-auth-prod-login-throttle',
        LOGIN_FAILURE_LIMIT: '5',
        IP_FAILURE_LIMIT: '100',
        LOGIN_LOCKOUT_BASE: '30s',
        LOGIN_LOCKOUT_MAX: '15m',
      });
    }
  });

  it('answers API Gateway’s own errors as problem+json: 401 with the functions’ invalid_token challenge, 404 for a path or method no route has', () => {
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
      'MISSING_AUTHENTICATION_TOKEN',
      'THROTTLED',
      'UNAUTHORIZED',
      'WAF_FILTERED',
    ]);
    for (const response of Object.values(responses)) {
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/problem+json'",
      });
    }
    // RFC 6750 section 3.1, word for word the functions' own 401: one challenge, whichever answers.
    const challenge =
      'Bearer error="invalid_token", error_description="The access token is missing, invalid, expired or revoked"';
    expect(problemResponse(new AppError('UNAUTHORIZED')).headers?.['WWW-Authenticate']).toBe(challenge);
    expect(responses.UNAUTHORIZED?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.WWW-Authenticate': `'${challenge}'`,
    });
    // API Gateway's 403 "Missing Authentication Token" (no route has the path and method) is a
    // 404, the service's own not-found problem, with no challenge: no token would find a route.
    const notFound = responses.MISSING_AUTHENTICATION_TOKEN;
    expect(notFound?.StatusCode).toBe('404');
    expect(notFound?.ResponseParameters).not.toHaveProperty(['gatewayresponse.header.WWW-Authenticate']);
    const notFoundBody = JSON.parse(
      String((notFound?.ResponseTemplates as Record<string, unknown> | undefined)?.['application/json']),
    ) as Record<string, unknown>;
    const serviceNotFound: Record<string, unknown> = JSON.parse(
      problemResponse(new AppError('NOT_FOUND')).body,
    );
    expect(notFoundBody).toEqual({
      type: 'urn:parcel-auth:problem:not-found',
      title: serviceNotFound.title,
      status: 404,
      detail: expect.any(String),
    });
    expect(serviceNotFound.type).toBe(notFoundBody.type);
    expect(responses.DEFAULT_5XX?.StatusCode).toBe('503');
    expect(responses.WAF_FILTERED?.StatusCode).toBe('403');
    expect(responses.THROTTLED).toMatchObject({
      StatusCode: '429',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
    });
    for (const response of Object.values(responses)) {
      const body = JSON.stringify(response.ResponseTemplates);
      expect(body).toContain('urn:parcel-auth:problem:');
    }
  });

  it('gives the OAuth endpoints and the administrators’ API the audit table and the stage’s retention, a year on prod', () => {
    for (const id of [
      'OauthTokenLambdaFunction',
      'OauthAuthorizeLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
      'CustomerApiLambdaFunction',
    ]) {
      expect(variablesOf(id), id).toMatchObject({
        AUDIT_TABLE: 'parcel-auth-prod-audit',
        AUDIT_RETENTION: '365d',
      });
    }
    expect(variablesOf('LoginLambdaFunction')).not.toHaveProperty('AUDIT_TABLE');
    const [, audit] = ofType('AWS::DynamoDB::Table').find(([id]) => id === 'AuditTable') ?? [];
    expect(audit?.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'customerId', KeyType: 'HASH' },
        { AttributeName: 'eventId', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('gives the session settings to the functions that use them', () => {
    expect(variablesOf('RefreshLambdaFunction')).toMatchObject({
      SESSION_MAX_LIFETIME: '90d',
      REFRESH_REUSE_GRACE: '30s',
      SESSIONS_TABLE: 'parcel-auth-prod-sessions',
    });
    // A platform's connection: its refresh sessions beside the users', rotated with the same grace.
    expect(variablesOf('OauthTokenLambdaFunction')).toMatchObject({
      REFRESH_REUSE_GRACE: '30s',
      SESSIONS_TABLE: 'parcel-auth-prod-sessions',
    });
    // The authorization requests and codes, on the same table.
    expect(variablesOf('OauthAuthorizeLambdaFunction').SESSIONS_TABLE).toBe('parcel-auth-prod-sessions');
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

  it('names the stage’s issuer to the functions that issue or verify tokens, and no former issuer on prod', () => {
    const withIssuer = ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => variablesOf(id).TOKEN_ISSUER !== undefined);
    expect(withIssuer.sort()).toEqual([
      'AuthorizerLambdaFunction',
      'LoginExtendedLambdaFunction',
      'LoginLambdaFunction',
      'LogoutLambdaFunction',
      'OauthAuthorizeLambdaFunction',
      'OauthIntrospectLambdaFunction',
      'OauthMetadataLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthTokenLambdaFunction',
      'PasskeyLoginLambdaFunction',
      'RefreshLambdaFunction',
    ]);
    for (const id of withIssuer) {
      expect(variablesOf(id).TOKEN_ISSUER, id).toBe('https://auth.parcel-carrier.example/prod');
    }
    // formerTokenIssuers: the verifiers (the token endpoint's of a platform's refresh token too)
    // accept tokens of no other issuer.
    for (const id of [
      'AuthorizerLambdaFunction',
      'RefreshLambdaFunction',
      'LogoutLambdaFunction',
      'OauthTokenLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
    ]) {
      expect(variablesOf(id).FORMER_TOKEN_ISSUERS, id).toBe('');
    }
  });

  it('creates no custom domain on prod: its domain name and base path mapping exist only under HasCustomDomain, which compares customDomainName with an empty string', () => {
    expect(template.Conditions?.HasCustomDomain).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
    const conditional = Object.entries(template.Resources).filter(
      ([, resource]) => resource.Condition === 'HasCustomDomain',
    );
    expect(Object.fromEntries(conditional.map(([id, resource]) => [id, resource.Type]))).toEqual({
      ApiDomainName: 'AWS::ApiGateway::DomainName',
      ApiBasePathMapping: 'AWS::ApiGateway::BasePathMapping',
    });
    for (const type of ['AWS::ApiGateway::DomainName', 'AWS::ApiGateway::BasePathMapping']) {
      expect(Object.values(template.Resources).filter((resource) => resource.Type === type)).toHaveLength(1);
      expect(ofType(type)).toEqual([]);
    }
    // Its output, the DNS target, is as conditional: it would name a domain that does not exist.
    const outputs = (template as Template & { Outputs?: Record<string, { Condition?: string }> }).Outputs;
    expect(outputs?.ApiDomainTarget?.Condition).toBe('HasCustomDomain');
  });

  it('refers to key material only by SSM parameter name, and never gives it to the wrong function', () => {
    for (const fn of ['LoginLambdaFunction', 'RefreshLambdaFunction']) {
      expect(variablesOf(fn).SIGNING_KEYRING).toBe('ssm:/parcel-auth/prod/signing-keyring');
    }
    for (const fn of ['AuthorizerLambdaFunction', 'LogoutLambdaFunction', 'JwksLambdaFunction']) {
      expect(variablesOf(fn).SIGNING_KEYRING).toBeUndefined();
      expect(variablesOf(fn).VERIFICATION_KEYS).toBe('ssm:/parcel-auth/prod/jwks');
    }
    // Revocation and introspection: the keyring for the login throttle's counter secret, the key set to verify.
    for (const fn of ['OauthRevokeLambdaFunction', 'OauthIntrospectLambdaFunction']) {
      expect(variablesOf(fn).SIGNING_KEYRING, fn).toBe('ssm:/parcel-auth/prod/signing-keyring');
      expect(variablesOf(fn).VERIFICATION_KEYS, fn).toBe('ssm:/parcel-auth/prod/jwks');
    }
    // The token endpoint signs, and verifies a platform's refresh token with the key set; the
    // authorization endpoint only counts (the counters' secret) and verifies nothing.
    expect(variablesOf('OauthTokenLambdaFunction').SIGNING_KEYRING).toBe(
      'ssm:/parcel-auth/prod/signing-keyring',
    );
    expect(variablesOf('OauthTokenLambdaFunction').VERIFICATION_KEYS).toBe('ssm:/parcel-auth/prod/jwks');
    expect(variablesOf('OauthAuthorizeLambdaFunction').SIGNING_KEYRING).toBe(
      'ssm:/parcel-auth/prod/signing-keyring',
    );
    expect(variablesOf('OauthAuthorizeLambdaFunction').VERIFICATION_KEYS).toBeUndefined();
    // The administrators' API: the keyring for the counters' secret (unlock); it verifies no token.
    expect(variablesOf('CustomerApiLambdaFunction').SIGNING_KEYRING).toBe(
      'ssm:/parcel-auth/prod/signing-keyring',
    );
    expect(variablesOf('CustomerApiLambdaFunction').VERIFICATION_KEYS).toBeUndefined();
    // The token endpoint's 405 and the console: the provider's variables only, no key, table or
    // issuer of any kind.
    expect(variablesOf('OauthWrongMethodLambdaFunction')).toEqual({ STAGE: 'prod', LOG_LEVEL: 'info' });
    expect(variablesOf('ConsoleLambdaFunction')).toEqual({ STAGE: 'prod', LOG_LEVEL: 'info' });
    expect(templateText).not.toMatch(/PRIVATE KEY|"d"\s*:|"kty"/);
    // No password, secret or demo credential of any kind: the template has no business with one.
    // Names are not credentials: the firewall's takeover prevention reads a login body's
    // `password` field, metrics are named PasswordHashUpgraded and LoginFailed BadPassword
    // (an alarm's metric math calls the latter `badPassword`), and the login role may write
    // the accounts table's attribute `passwordHash`.
    const metricNames = Object.entries(METRICS).flatMap(([name, dimensions]) => [
      name,
      ...Object.values(dimensions as Record<string, readonly string[]>).flat(),
    ]);
    // The administrators' routes to a client's secrets are paths: API Gateway's resources for
    // /secrets and /secrets/{secretId}, and the methods on them, are named after them.
    const secretPaths = [
      '/api/v1/customer/clients/{clientId}/secrets',
      '/api/v1/customer/clients/{clientId}/secrets/{secretId}',
    ];
    const pathResources = ofType('AWS::ApiGateway::Resource').filter(([id]) => /secret/i.test(id));
    expect(pathResources.map(([id]) => pathOf(resources, { Ref: id })).sort()).toEqual(secretPaths);
    const pathMethods = ofType('AWS::ApiGateway::Method').filter(([id]) => /secret/i.test(id));
    expect(
      pathMethods.map(
        ([, m]) => `${String(m.Properties.HttpMethod)} ${pathOf(resources, m.Properties.ResourceId)}`,
      ),
    ).toEqual([`POST ${secretPaths[0]}`, `DELETE ${secretPaths[1]}`]);
    const names = [
      '"PasswordField"',
      '"/password"',
      '"passwordHash"',
      // The attribute of a client item holding its secrets' ids and digests, which the authorizer may
      // read; and the routes' path parts.
      '"secrets"',
      '"{secretId}"',
      ...[...pathResources, ...pathMethods].map(([id]) => `"${id}"`),
      ...metricNames.flatMap((n) => [n, n[0]?.toLowerCase() + n.slice(1)]),
    ]
      // The longer first: `client.secret.added` (a CredentialChanged type) before `client` (the lock
      // metrics' counter Client, as metric math names it).
      .sort((a, b) => b.length - a.length);
    const withoutNames = names.reduce((text, name) => text.replaceAll(name, ''), templateText);
    expect(withoutNames).not.toMatch(/password|secret|demo/i);
  });
});

/** Checks every metric line of the dashboard names a metric the stage has. */

describe('the prod dashboard', () => {
  it('is valid JSON once CloudFormation substitutes resource names, and substitutes only resources that exist', () => {
    const { substitutions } = dashboardOf(resources, 'parcel-auth-prod');
    for (const name of substitutions) {
      if (name.startsWith('AWS::')) {
        expect(name).toBe('AWS::Region');
        continue;
      }
      const [id = '', attribute] = name.split('.');
      expect(resources[id], name).toBeDefined();
      if (attribute !== undefined) {
        expect(attribute).toBe('Arn');
        expect(resources[id]?.Type).toBe('AWS::CloudWatch::Alarm');
      }
    }
  });

  it('reads only metrics the stage has: its own by catalogue, AWS’s of its own functions, tables, API and web ACL', () => {
    expectDashboardMetricsExist(resources, dashboardOf(resources, 'parcel-auth-prod').widgets, 'prod');
  });

  it('shows requests, errors, latency, logins, client grants, administrators’ changes and refusals, lost audit events, lockouts, locks refused and spared, reuse, authorizer denies, throttles and the alarms', () => {
    const { widgets } = dashboardOf(resources, 'parcel-auth-prod');
    const metrics = metricsOfWidgets(widgets);
    const shown = (namespace: string, name: string, match: Record<string, string> = {}, stat?: string) =>
      metrics.some(
        (m) =>
          m.namespace === namespace &&
          m.name === name &&
          Object.entries(match).every(([key, value]) => m.dimensions[key] === value) &&
          (stat === undefined || (m.options.stat ?? m.widget.properties.stat) === stat),
      );
    for (const name of ['Count', '4XXError', '5XXError'])
      expect(shown('AWS/ApiGateway', name), name).toBe(true);
    for (const stat of ['p50', 'p99']) expect(shown('AWS/ApiGateway', 'Latency', {}, stat), stat).toBe(true);
    for (const [id] of ofType('AWS::Lambda::Function')) {
      for (const stat of ['p50', 'p99']) {
        expect(shown('AWS/Lambda', 'Duration', { FunctionName: `\${${id}}` }, stat), `${id} ${stat}`).toBe(
          true,
        );
      }
      expect(shown('AWS/Lambda', 'Throttles', { FunctionName: `\${${id}}` }), id).toBe(true);
    }
    for (const [id] of ofType('AWS::DynamoDB::Table')) {
      for (const name of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        expect(shown('AWS/DynamoDB', name, { TableName: `\${${id}}` }), `${id} ${name}`).toBe(true);
      }
    }
    expect(shown('parcel-auth', 'LoginSucceeded')).toBe(true);
    for (const reason of METRICS.LoginFailed.reason)
      expect(shown('parcel-auth', 'LoginFailed', { reason })).toBe(true);
    for (const counter of METRICS.LockoutStarted.counter) {
      expect(shown('parcel-auth', 'LockoutStarted', { counter }), counter).toBe(true);
    }
    // Each lock metric on a graph of its own, by every counter it has.
    const graphed = (title: string) =>
      metrics
        .filter((m) => m.widget.properties.title === title)
        .map((m) => `${m.name}{counter=${m.dimensions.counter}}`);
    const byCounter = (name: keyof typeof METRICS, counters: readonly string[]) =>
      counters.map((counter) => `${name}{counter=${counter}}`);
    expect(graphed('Lockouts started')).toEqual(byCounter('LockoutStarted', METRICS.LockoutStarted.counter));
    expect(graphed('Logins a lock refused')).toEqual(byCounter('LockRefused', METRICS.LockRefused.counter));
    expect(graphed('Known-source logins a lock spared')).toEqual(
      byCounter('LockSpared', METRICS.LockSpared.counter),
    );
    expect(shown('parcel-auth', 'RefreshReuseDetected')).toBe(true);
    expect(shown('parcel-auth', 'ClientTokenIssued')).toBe(true);
    for (const reason of METRICS.ClientAuthFailed.reason)
      expect(shown('parcel-auth', 'ClientAuthFailed', { reason }), reason).toBe(true);
    for (const reason of METRICS.ClientTokenRefused.reason)
      expect(shown('parcel-auth', 'ClientTokenRefused', { reason }), reason).toBe(true);
    expect(shown('parcel-auth', 'AuthorizerInsufficientScope')).toBe(true);
    for (const type of METRICS.CredentialChanged.type)
      expect(shown('parcel-auth', 'CredentialChanged', { type }), type).toBe(true);
    for (const reason of METRICS.AdministrationRefused.reason)
      expect(shown('parcel-auth', 'AdministrationRefused', { reason }), reason).toBe(true);
    expect(shown('parcel-auth', 'AuditWriteFailed')).toBe(true);
    // The graph of credentials shown stacks exactly what CredentialsShownAlarm sums, over its 5 minutes.
    const shownGraph = widgets.find(
      (widget) => widget.properties.title === 'New API client credentials shown (per 5 minutes)',
    );
    expect(shownGraph?.properties).toMatchObject({ stacked: true, period: 300, stat: 'Sum' });
    expect(
      metricsOfWidgets(shownGraph === undefined ? [] : [shownGraph]).map(
        (m) => `parcel-auth ${m.name}{type=${m.dimensions.type}}`,
      ),
    ).toEqual(alarmedMetrics(resources, 'CredentialsShownAlarm'));
    for (const reason of METRICS.AuthorizerDeny.reason) {
      expect(shown('parcel-auth', 'AuthorizerDeny', { reason })).toBe(true);
    }
    const ratio = widgets.flatMap((w) => w.properties.metrics ?? []).map(parseLine);
    expect(ratio).toContainEqual(expect.objectContaining({ expression: '100 * hits / (hits + misses)' }));
    const alarmWidget = widgets.find((widget) => widget.type === 'alarm');
    expect(alarmWidget?.properties.alarms?.sort()).toEqual(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => `\${${id}.Arn}`)
        .sort(),
    );
  });

  it('lays its widgets out within the 24 columns, none on top of another', () => {
    const { widgets } = dashboardOf(resources, 'parcel-auth-prod');
    const cells = new Set<string>();
    for (const widget of widgets) {
      expect(widget.x + widget.width).toBeLessThanOrEqual(24);
      for (let x = widget.x; x < widget.x + widget.width; x++) {
        for (let y = widget.y; y < widget.y + widget.height; y++) {
          expect(cells.has(`${x},${y}`), widget.properties.title).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });
});

describe('the prod web application firewall', () => {
  type Rule = {
    Name: string;
    Priority: number;
    Action?: { Block?: { CustomResponse?: { ResponseCode: number; CustomResponseBodyKey: string } } };
    Statement: Record<string, Record<string, unknown>>;
  };
  const webAcl = () => resources.WebAcl?.Properties as Record<string, unknown> & { Rules: unknown[] };
  const rules = () => webAcl().Rules.filter((rule): rule is Rule => !('Fn::If' in (rule as object)));

  it('is switched on by the stage parameter, in front of the API stage', () => {
    expect(evaluateCondition(template.Conditions ?? {}, { Condition: 'WafEnabled' })).toBe(true);
    expect(resources.WebAcl).toMatchObject({ Type: 'AWS::WAFv2::WebACL', Condition: 'WafEnabled' });
    expect(webAcl()).toMatchObject({
      Name: 'parcel-auth-prod',
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
    });
    const association = template.Resources.WebAclAssociation;
    expect(association).toMatchObject({
      Type: 'AWS::WAFv2::WebACLAssociation',
      Condition: 'WafEnabled',
      Properties: {
        WebACLArn: { 'Fn::GetAtt': ['WebAcl', 'Arn'] },
        ResourceArn: {
          'Fn::Sub':
            // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub, not JavaScript's
            'arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${ApiGatewayRestApi}/stages/prod',
        },
      },
    });
    // The stage exists only once the deployment that creates it does.
    const [deployment] = ofType('AWS::ApiGateway::Deployment').map(([id]) => id);
    expect(association?.DependsOn).toContain(deployment);
  });

  it('checks IP reputation first, then the login rate per address, the body size, then AWS’s common rule set', () => {
    expect(rules().map((rule) => [rule.Priority, rule.Name])).toEqual([
      [0, 'IpReputation'],
      [1, 'LoginRateLimit'],
      [2, 'BodySizeLimit'],
      [3, 'CommonRuleSet'],
    ]);
    const managed = (name: string) =>
      rules().find((rule) => rule.Name === name)?.Statement.ManagedRuleGroupStatement;
    expect(managed('IpReputation')).toMatchObject({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesAmazonIpReputationList',
    });
    expect(managed('CommonRuleSet')).toMatchObject({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesCommonRuleSet',
    });
  });

  it('limits requests per source address on the login, login-extended, refresh and OAuth token, revocation, introspection, pushed request, authorization and passkey sign-in routes only', () => {
    const rate = rules().find((rule) => rule.Name === 'LoginRateLimit');
    const statement = rate?.Statement.RateBasedStatement as Record<string, unknown>;
    expect(statement).toMatchObject({ Limit: 1000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 });
    const scope = statement.ScopeDownStatement as Record<string, unknown>;
    // The routes API Gateway throttles as login routes, with the stage prefix of the
    // execute-api host and without it (a custom domain).
    const settings = (ofType('AWS::ApiGateway::Deployment')[0]?.[1].Properties.StageDescription ?? {}) as {
      MethodSettings: { ResourcePath: string }[];
    };
    const loginRoutes = settings.MethodSettings.map((m) => m.ResourcePath.replaceAll('~1', '/'));
    expect(loginRoutes).toEqual([
      '/api/v1/login',
      '/api/v1/login-extended',
      '/api/v1/token/refresh',
      '/api/v1/oauth/token',
      '/api/v1/oauth/revoke',
      '/api/v1/oauth/introspect',
      '/api/v1/oauth/par',
      '/api/v1/oauth/authorize',
      '/api/v1/passkey-login/options',
      '/api/v1/passkey-login',
    ]);
    // One match per route, on the path wherever it stands (after the stage prefix or none).
    const matches = (scope.OrStatement as { Statements: { ByteMatchStatement: Record<string, unknown> }[] })
      .Statements;
    expect(matches.map((match) => match.ByteMatchStatement.SearchString)).toEqual(loginRoutes);
    for (const match of matches) expect(match.ByteMatchStatement.PositionalConstraint).toBe('CONTAINS');
    for (const route of loginRoutes) {
      expect(matchesPath(scope, route), route).toBe(true);
      expect(matchesPath(scope, `/prod${route}`), route).toBe(true);
    }
    for (const other of [
      '/prod/api/v1/logout',
      '/prod/api/v1/tracking/1',
      '/prod/api/v1/shipments',
      '/prod/.well-known/jwks.json',
      '/prod/.well-known/oauth-authorization-server',
      '/prod/api/v1/customer/connections',
    ]) {
      expect(matchesPath(scope, other), other).toBe(false);
    }
  });

  it('answers its own blocks with problem bodies: 429 with Retry-After for the rate limit, 413 for a large body', () => {
    const bodies = webAcl().CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    const blocks = JSON.stringify(webAcl().Rules);
    const used = [...blocks.matchAll(/"ResponseCode":(\d+),"CustomResponseBodyKey":"(\w+)"/g)].map(
      ([, code, key]) => [Number(code), key],
    );
    expect(new Set(used.map(([code]) => code))).toEqual(new Set([413, 429]));
    for (const [code, key] of used) {
      const body = bodies[String(key)];
      expect(body?.ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(body?.Content ?? '{}')).toMatchObject({
        type: expect.stringMatching(/^urn:parcel-auth:problem:/),
        title: expect.any(String),
        status: code,
      });
    }
    expect(rules().find((rule) => rule.Name === 'LoginRateLimit')?.Action).toMatchObject({
      Block: {
        CustomResponse: {
          ResponseCode: 429,
          ResponseHeaders: expect.arrayContaining([
            { Name: 'Retry-After', Value: expect.stringMatching(/^\d+$/) },
          ]),
        },
      },
    });
  });

  it('answers every 403 through API Gateway’s WAF_FILTERED response, application/problem+json like every other error', () => {
    // AWS WAF's own custom responses can only be text/plain, text/html or application/json
    // (CustomResponseBody ContentType) and no custom header may be Content-Type; API Gateway's
    // gateway response can say application/problem+json, and answers every block that has no
    // custom response. So no rule or rule override of the web ACL sends a 403 of its own.
    const codes = [...JSON.stringify(webAcl().Rules).matchAll(/"ResponseCode":(\d+)/g)].map(([, code]) =>
      Number(code),
    );
    expect(codes).not.toContain(403);
    expect(JSON.stringify(webAcl().Rules)).not.toMatch(/"Name":"content-type"/i);
    const filtered = ofType('AWS::ApiGateway::GatewayResponse').find(
      ([, response]) => response.Properties.ResponseType === 'WAF_FILTERED',
    )?.[1].Properties;
    expect(filtered).toMatchObject({
      StatusCode: '403',
      ResponseParameters: { 'gatewayresponse.header.Content-Type': "'application/problem+json'" },
    });
  });

  it('refuses a body over the service’s own limit with the service’s 413, and lets no rule refuse a smaller one', () => {
    const managed = (name: string) =>
      rules().find((rule) => rule.Name === name)?.Statement.ManagedRuleGroupStatement;
    // The common rule set's SizeRestrictions_BODY blocks bodies over 8 KB: it only counts here.
    expect(managed('CommonRuleSet')?.RuleActionOverrides).toEqual([
      { Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } },
    ]);
    const limit = rules().find((rule) => rule.Name === 'BodySizeLimit');
    expect(limit?.Statement.SizeConstraintStatement).toEqual({
      FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
      ComparisonOperator: 'GT',
      Size: MAX_BODY_BYTES,
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    });
    // On API Gateway AWS WAF inspects the first 16 KB of a body (its default); with
    // OversizeHandling MATCH a larger limit would refuse bodies the service accepts.
    expect(MAX_BODY_BYTES).toBeLessThanOrEqual(16 * 1024);
    expect(webAcl().AssociationConfig).toBeUndefined();
    const response = limit?.Action?.Block?.CustomResponse;
    expect(response?.ResponseCode).toBe(413);
    const bodies = webAcl().CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    const service = problemResponse(new AppError('PAYLOAD_TOO_LARGE'));
    expect(JSON.parse(bodies[response?.CustomResponseBodyKey ?? '']?.Content ?? '{}')).toEqual(
      JSON.parse(service.body),
    );
  });

  it('adds account takeover prevention on POST /login only behind its own parameter, off on prod', () => {
    const written = template.Resources.WebAcl?.Properties as { Rules: unknown[] };
    expect(JSON.stringify(webAcl().Rules)).not.toContain('AccountTakeoverPrevention');
    const [optional] = written.Rules.filter((rule) => 'Fn::If' in (rule as object)) as {
      'Fn::If': [string, Rule, unknown];
    }[];
    const [condition, rule, otherwise] = optional?.['Fn::If'] ?? [];
    expect(condition).toBe('WafAccountTakeoverPrevention');
    expect(otherwise).toEqual({ Ref: 'AWS::NoValue' });
    expect(evaluateCondition(template.Conditions ?? {}, { Condition: 'WafAccountTakeoverPrevention' })).toBe(
      false,
    );
    expect(rule?.Statement.ManagedRuleGroupStatement).toMatchObject({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesATPRuleSet',
      ManagedRuleGroupConfigs: [
        {
          AWSManagedRulesATPRuleSet: {
            RequestInspection: {
              PayloadType: 'JSON',
              UsernameField: { Identifier: '/username' },
              PasswordField: { Identifier: '/password' },
            },
          },
        },
      ],
    });
    const scope = rule?.Statement.ManagedRuleGroupStatement?.ScopeDownStatement as Record<string, unknown>;
    expect(matchesPath(scope, '/prod/api/v1/login')).toBe(true);
    expect(matchesPath(scope, '/prod/api/v1/login-extended')).toBe(false);
    const configs = (rule?.Statement.ManagedRuleGroupStatement?.ManagedRuleGroupConfigs ?? []) as {
      AWSManagedRulesATPRuleSet: { LoginPath: string };
    }[];
    const loginPath = new RegExp(configs[0]?.AWSManagedRulesATPRuleSet.LoginPath ?? '^$');
    expect(loginPath.test('/prod/api/v1/login')).toBe(true);
    expect(loginPath.test('/api/v1/login')).toBe(true);
    expect(loginPath.test('/prod/api/v1/login-extended')).toBe(false);
  });
});
