/**
 * `serverless package --stage prod` runs offline, without AWS credentials, and produces the
 * template we mean to deploy: checked here resource by resource.
 */
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzip } from '../../dev/bench/bundles.ts';
import { readStageParams } from '../../infra/stage-params.ts';
import { createDynamoAccountRepository, createDynamoStatusReader } from '../../lib/accounts/dynamodb.ts';
import { createClientAuthAudit } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import {
  createDynamoClientReader,
  createDynamoClientStatusReader,
  createDynamoClientTokenRevoker,
} from '../../lib/clients/dynamodb.ts';
import { AppError } from '../../lib/errors.ts';
import { MAX_BODY_BYTES } from '../../lib/http/body.ts';
import { problemResponse } from '../../lib/http/problems.ts';
import { createLogger } from '../../lib/log.ts';
import { METRICS } from '../../lib/metrics/metrics.ts';
import { tableNames } from '../../lib/stage.ts';
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
import { attributesOf, recordingClient } from '../support/dynamodb-requests.ts';
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
      'CreateShipmentLambdaFunction',
      'JwksLambdaFunction',
      'LoginExtendedLambdaFunction',
      'LoginLambdaFunction',
      'LogoutLambdaFunction',
      'OauthIntrospectLambdaFunction',
      'OauthMetadataLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthTokenLambdaFunction',
      'OauthWrongMethodLambdaFunction',
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
    expect(methods).toHaveLength(14);
    for (const [id, method] of methods) {
      // login, login-extended, token/refresh, logout, the key set, the OAuth token, revocation
      // and introspection endpoints (every method of each) and the metadata are public.
      const isPublic = /Login|Token|Logout|Jwks|Oauth/.test(id);
      expect(method.Properties.AuthorizationType, id).toBe(isPublic ? 'NONE' : 'CUSTOM');
      if (!isPublic) expect(method.Properties.AuthorizerId, id).toEqual({ Ref: authorizer?.[0] });
    }
    expect(methods.filter(([, m]) => m.Properties.AuthorizationType === 'CUSTOM')).toHaveLength(2);
    // Each OAuth endpoint: POST is its own function; every other method gets the 405 of a function of its own.
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
        login('~1api~1v1~1oauth~1token'),
        login('~1api~1v1~1oauth~1revoke'),
        login('~1api~1v1~1oauth~1introspect'),
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
              const target =
                /"([A-Za-z]+Table)"/.exec(text)?.[1] ?? /parameter\/[^"]+/.exec(text)?.[0] ?? text;
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
        RefreshLambdaFunction: 'RefreshRole',
        LogoutLambdaFunction: 'LogoutRole',
        JwksLambdaFunction: 'JwksRole',
        AuthorizerLambdaFunction: 'AuthorizerRole',
        CreateShipmentLambdaFunction: 'CreateShipmentRole',
        TrackShipmentLambdaFunction: 'TrackShipmentRole',
        OauthTokenLambdaFunction: 'OAuthTokenRole',
        OauthRevokeLambdaFunction: 'OAuthRevokeRole',
        OauthIntrospectLambdaFunction: 'OAuthIntrospectRole',
        OauthWrongMethodLambdaFunction: 'OAuthWrongMethodRole',
        OauthMetadataLambdaFunction: 'OAuthMetadataRole',
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
      expect(logGroups('OAuthRevokeRole')).toEqual(['OauthRevoke']);
      expect(logGroups('OAuthIntrospectRole')).toEqual(['OauthIntrospect']);
      expect(logGroups('OAuthMetadataRole')).toEqual(['OauthMetadata']);
      expect(logGroups('OAuthWrongMethodRole')).toEqual(['OauthWrongMethod']);
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
      expect(grants('LogoutRole')).toEqual([
        'dynamodb:UpdateItem on SessionsTable',
        `ssm:GetParameter on ${jwks}`,
      ]);
      expect(grants('JwksRole')).toEqual([`ssm:GetParameter on ${jwks}`]);
      expect(grants('AuthorizerRole')).toEqual([
        'dynamodb:GetItem on AccountsTable',
        `ssm:GetParameter on ${jwks}`,
      ]);
      expect(grants('OAuthTokenRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
          'dynamodb:GetItem on LoginThrottleTable',
          'dynamodb:PutItem on LoginThrottleTable',
          'dynamodb:UpdateItem on LoginThrottleTable',
          'dynamodb:PutItem on AuditTable',
          `ssm:GetParameter on ${keyring}`,
        ].sort(),
      );
      expect(grants('OAuthMetadataRole')).toEqual([]);
      // The token endpoint's 405 answers every other method from nothing but its own code.
      expect(grants('OAuthWrongMethodRole')).toEqual([]);
      // The token endpoint reads client items only (its one write, last use, is held below).
      expect(
        statementsOf(resources, 'OAuthTokenRole').find(
          (statement) =>
            statement.Action.includes('dynamodb:GetItem') &&
            JSON.stringify(statement.Resource).includes('"AccountsTable"'),
        )?.Condition,
      ).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } });
      // Revocation and introspection authenticate clients as the token endpoint does (the client
      // item, the throttle and its counter secret in the keyring) and verify tokens with the key set.
      expect(grants('OAuthRevokeRole')).toEqual(
        [
          'dynamodb:GetItem on AccountsTable',
          'dynamodb:UpdateItem on AccountsTable',
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
      // The revoker reads client items only (its one write is held below).
      expect(accountReads('OAuthRevokeRole')).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } },
      ]);
      // The introspector reads a client item whole (client authentication reads its secrets'
      // digests), and a user item only in the authorizer's projection: never a password hash.
      expect(accountReads('OAuthIntrospectRole')).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] } },
        {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': ['pk', 'sk', 'username', 'enabled', 'revokedBefore', 'revokedSessions'],
          },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      ]);
      expect(grants('CreateShipmentRole')).toEqual([
        'dynamodb:GetItem on ShipmentsTable',
        'dynamodb:PutItem on ShipmentsTable',
      ]);
      // The authorizer reads user and client items only, and only the attributes it projects: never a
      // hash (a client's revokedTokens: the tokens it revoked itself).
      const read = statementsOf(resources, 'AuthorizerRole').find((statement) =>
        statement.Action.includes('dynamodb:GetItem'),
      );
      expect(read).toMatchObject({
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*', 'CLIENT#*'] },
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
            ],
          },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      });
      expect(grants('TrackShipmentRole')).toEqual(['dynamodb:GetItem on ShipmentsTable']);
    });

    it('allows every attribute, key and return value of the requests the code makes under those conditions', async () => {
      // The local stack does not enforce IAM: a request naming an attribute its role's
      // dynamodb:Attributes lacks would first fail on AWS. So the requests themselves, as the
      // code builds them, are held to the conditions here (a client that only writes them down).
      const { client, requestsOf } = recordingClient();
      const tableName = 'parcel-auth-prod-accounts';
      type Condition = Record<string, Record<string, unknown>>;
      /** The conditions of a role's statements allowing `action` on the accounts table. */
      const conditionsOf = (roleId: string, action: string) =>
        statementsOf(resources, roleId)
          .filter(
            (statement) =>
              statement.Action.includes(action) &&
              JSON.stringify(statement.Resource).includes('"AccountsTable"'),
          )
          .map((statement) => (statement.Condition ?? {}) as Condition);
      /** Why `condition` refuses `request`: nothing when it allows it. */
      const refusals = (condition: Condition, request: Record<string, unknown>) => {
        const found: string[] = [];
        // Only the condition keys read here: any other would go unchecked.
        const keys = Object.entries(condition).flatMap(([operator, values]) =>
          Object.keys(values).map((key) => `${operator} ${key}`),
        );
        for (const key of keys) {
          expect([
            'ForAllValues:StringLike dynamodb:LeadingKeys',
            'ForAllValues:StringEquals dynamodb:Attributes',
            'StringEqualsIfExists dynamodb:ReturnValues',
            'StringEqualsIfExists dynamodb:Select',
          ]).toContain(key);
        }
        const leading = condition['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as
          | string[]
          | undefined;
        const pk = String((request.Key as { pk: string }).pk);
        if (leading !== undefined && !leading.some((pattern) => pk.startsWith(pattern.replace(/\*$/, ''))))
          found.push(`key ${pk} not in ${leading.join(', ')}`);
        const allowed = condition['ForAllValues:StringEquals']?.['dynamodb:Attributes'] as
          | string[]
          | undefined;
        const outside = attributesOf(request).filter((attribute) => !allowed?.includes(attribute));
        if (allowed !== undefined && outside.length > 0) found.push(`attributes ${outside.join(', ')}`);
        const returnValues = condition.StringEqualsIfExists?.['dynamodb:ReturnValues'] as
          | string[]
          | undefined;
        if (
          returnValues !== undefined &&
          request.ReturnValues !== undefined &&
          !returnValues.includes(String(request.ReturnValues))
        )
          found.push(`return values ${request.ReturnValues}`);
        const select = condition.StringEqualsIfExists?.['dynamodb:Select'];
        if (select !== undefined && request.Select !== undefined && request.Select !== select)
          found.push(`select ${request.Select}`);
        return found;
      };
      /** Each request allowed by one of the role's statements for `action` at least. */
      const expectAllowed = (requests: Record<string, unknown>[], roleId: string, action: string) => {
        const conditions = conditionsOf(roleId, action);
        expect(conditions.length, `${roleId} ${action}`).toBeGreaterThan(0);
        expect(requests.length, roleId).toBeGreaterThan(0);
        for (const request of requests) {
          expect(request.TableName).toBe(tableName);
          const refused = conditions.map((condition) => refusals(condition, request));
          expect(
            refused.some((reasons) => reasons.length === 0),
            `${roleId} ${action} ${JSON.stringify(request)}: ${JSON.stringify(refused)}`,
          ).toBe(true);
        }
      };
      const repository = createDynamoAccountRepository({ client, tableName });
      expectAllowed(
        await requestsOf(() => repository.upgradePasswordHash('Alice', '$2b$04$old', '$2b$10$new')),
        'LoginRole',
        'dynamodb:UpdateItem',
      );
      expectAllowed(
        await requestsOf(() => repository.revokeSessionTokens('Alice', 'session-1', 2_000_000_000)),
        'RefreshRole',
        'dynamodb:UpdateItem',
      );
      const userStatus = await requestsOf(() =>
        createDynamoStatusReader({ client, tableName }).findStatus('Alice'),
      );
      const clientStatus = await requestsOf(() =>
        createDynamoClientStatusReader({ client, tableName }).findClientStatus('pcl_0123456789abcdef0123'),
      );
      // Client authentication (the token endpoint, revocation and introspection): the client item whole.
      const clientRead = await requestsOf(() =>
        createDynamoClientReader({ client, tableName }).findClient('pcl_0123456789abcdef0123'),
      );
      expectAllowed(userStatus, 'AuthorizerRole', 'dynamodb:GetItem');
      expectAllowed(clientStatus, 'AuthorizerRole', 'dynamodb:GetItem');
      for (const roleId of ['OAuthTokenRole', 'OAuthRevokeRole', 'OAuthIntrospectRole']) {
        expectAllowed(clientRead, roleId, 'dynamodb:GetItem');
      }
      // The grant's last-use write: a secret's lastUsedAt and the client's.
      const lastUse = await requestsOf(() =>
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
      const revocation = await requestsOf(() =>
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
    });

    it('lets login update only a user item’s password hash, refresh only its revokedSessions, revocation only a client item’s revokedTokens, and the token endpoint only its last use', () => {
      const accountUpdates = (roleId: string) =>
        statementsOf(resources, roleId).filter(
          (statement) =>
            statement.Action.includes('dynamodb:UpdateItem') &&
            JSON.stringify(statement.Resource).includes('"AccountsTable"'),
        );
      // What the code writes (lib/accounts/dynamodb.ts): upgradePasswordHash sets passwordHash on
      // condition of username and passwordHash; revokeSessionTokens sets revokedSessions on
      // condition of username; lib/revocation/dynamodb.ts createClientTokenRevoker sets a client
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
      expect(accountUpdates('LoginRole')).toEqual([updateOf(['pk', 'sk', 'username', 'passwordHash'])]);
      expect(accountUpdates('RefreshRole')).toEqual([updateOf(['pk', 'sk', 'username', 'revokedSessions'])]);
      expect(accountUpdates('OAuthRevokeRole')).toEqual([
        updateOf(['pk', 'sk', 'clientId', 'revokedTokens'], 'CLIENT#*'),
      ]);
      // lib/clients/dynamodb.ts recordUse: a secret's lastUsedAt and the client's, on condition of clientId.
      expect(accountUpdates('OAuthTokenRole')).toEqual([
        updateOf(['pk', 'sk', 'clientId', 'secrets', 'lastUsedAt'], 'CLIENT#*'),
      ]);
      const writers = ['LoginRole', 'RefreshRole', 'OAuthRevokeRole', 'OAuthTokenRole'];
      const others = ofType('AWS::IAM::Role').filter(([id]) => !writers.includes(id));
      for (const [id] of others) expect(accountUpdates(id), id).toEqual([]);
    });

    it('lets only the OAuth endpoints write the audit trail, by PutItem alone, and no function read it', async () => {
      const auditGrants = (roleId: string) =>
        grants(roleId).filter((grant) => grant.endsWith(' on AuditTable'));
      const writers = ['OAuthTokenRole', 'OAuthRevokeRole', 'OAuthIntrospectRole'];
      for (const roleId of writers)
        expect(auditGrants(roleId), roleId).toEqual(['dynamodb:PutItem on AuditTable']);
      for (const [id] of ofType('AWS::IAM::Role').filter(([id]) => !writers.includes(id)))
        expect(auditGrants(id), id).toEqual([]);
      // What the functions' recorder sends for a failure: one PutItem of the event, nothing else.
      const { client, requestsOf } = recordingClient();
      const tableName = tableNames('prod').audit;
      const audit = createClientAuthAudit({
        trail: createDynamoAuditTrail({ client, tableName }),
        logger: createLogger('error', () => {}),
        retentionSeconds: 86_400,
      });
      const sent = await requestsOf(() =>
        audit.failedAuthentication({
          customerId: 'C-1001',
          clientId: 'pcl_0123456789abcdef0123',
          sourceIp: '203.0.113.9',
          reason: 'bad secret',
        }),
      );
      expect(sent.map((request) => Object.keys(request).sort())).toEqual([['Item', 'TableName']]);
      expect(sent[0]?.TableName).toBe(tableName);
    });
  });

  it('keeps every function’s logs and the access log for the stage’s retention', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    const ofFunctions = ofType('AWS::Lambda::Function').map(([id]) =>
      id.replace(/LambdaFunction$/, 'LogGroup'),
    );
    expect(groups.map(([id]) => id).sort()).toEqual([...ofFunctions, 'ApiAccessLogGroup'].sort());
    expect(groups).toHaveLength(14);
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

    it('lets only the signing roles and those that authenticate clients decrypt, and the operators’ role write, the keyring only, through SSM only', () => {
      const usage = statements().filter((statement) => statement.Action.some((action) => USAGE.test(action)));
      expect(
        Object.fromEntries(usage.map((statement) => [principalsOf(statement).join(' '), statement.Action])),
      ).toEqual({
        // Revocation and introspection sign nothing: the login throttle's counter secret is in the keyring.
        '<LoginRole.Arn> <OAuthIntrospectRole.Arn> <OAuthRevokeRole.Arn> <OAuthTokenRole.Arn> <RefreshRole.Arn>':
          ['kms:Decrypt'],
        'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/parcel-auth-operator': [
          'kms:Encrypt',
          'kms:Decrypt',
        ],
      });
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
    for (const [, method] of ofType('AWS::ApiGateway::Method')) {
      const target = JSON.stringify(method.Properties.Integration);
      const fn = /"([A-Za-z]+LambdaFunction)"/.exec(target)?.[1] ?? target;
      const path = pathOf(resources, method.Properties.ResourceId).replace(/\{[^}]+\}/g, '*');
      // API Gateway invokes an ANY method with the request's own method in the source ARN: a
      // permission for the literal `ANY` never matches (every call would fail), so `*`.
      const verb = String(method.Properties.HttpMethod).replace(/^ANY$/, '*');
      routes.push([fn, `${api}/prod/${verb}${path}`]);
    }
    const expected = byFunction(routes);
    expect(Object.keys(expected)).toHaveLength(13);
    // Each OAuth endpoint's POST function, and the 405 for any method of the three paths.
    expect(expected.OauthTokenLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/token`]);
    expect(expected.OauthRevokeLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/revoke`]);
    expect(expected.OauthIntrospectLambdaFunction).toEqual([`${api}/prod/POST/api/v1/oauth/introspect`]);
    expect(expected.OauthWrongMethodLambdaFunction).toEqual(
      ['introspect', 'revoke', 'token'].map((endpoint) => `${api}/prod/*/api/v1/oauth/${endpoint}`),
    );
    const granted = byFunction(
      permissions.map((permission) => [
        joined((permission.FunctionName as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]),
        joined(permission.SourceArn),
      ]),
    );
    // The 405's three routes in its one permission (infra/invoke-permissions.yml): any method of
    // any path under /api/v1/oauth/ on this stage; every other function's, its routes exactly.
    const wrongMethod = `${api}/prod/*/api/v1/oauth/*`;
    expect(granted).toEqual({ ...expected, OauthWrongMethodLambdaFunction: [wrongMethod] });
    /** ArnLike: `*` any run of characters, `/` included. */
    const arnLike = (pattern: string, arn: string) =>
      new RegExp(
        `^${pattern
          .split('*')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ).test(arn);
    for (const endpoint of ['token', 'revoke', 'introspect']) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']) {
        const arn = `${api}/prod/${method}/api/v1/oauth/${endpoint}`;
        expect(arnLike(wrongMethod, arn), arn).toBe(true);
      }
    }
    for (const arn of [
      `${api}/prod/GET/.well-known/oauth-authorization-server`,
      `${api}/prod/POST/api/v1/login`,
      `${api}/prod/GET/api/v1/tracking/1`,
      `${api}/dev/GET/api/v1/oauth/token`,
    ]) {
      expect(arnLike(wrongMethod, arn), arn).toBe(false);
    }
  });

  it('alarms on 5xx rate, function errors, authorizer failures, throttles, failed logins and client authentications, lockouts and refresh-token reuse, to the stage topic', () => {
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm'));
    expect(Object.keys(alarms).sort()).toEqual([
      'Api5xxRateAlarm',
      'AuthorizerFailureAlarm',
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
    // credentials or client secrets, and the others.
    const credentials = [
      'LoginLambdaFunction',
      'LoginExtendedLambdaFunction',
      'RefreshLambdaFunction',
      'LogoutLambdaFunction',
      'OauthTokenLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
    ];
    const others = [
      'OauthMetadataLambdaFunction',
      'OauthWrongMethodLambdaFunction',
      'JwksLambdaFunction',
      'CreateShipmentLambdaFunction',
      'TrackShipmentLambdaFunction',
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

  it('gives the OAuth endpoints the audit table and the stage’s retention, a year on prod', () => {
    for (const id of [
      'OauthTokenLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
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
      'OauthIntrospectLambdaFunction',
      'OauthMetadataLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthTokenLambdaFunction',
      'RefreshLambdaFunction',
    ]);
    for (const id of withIssuer) {
      expect(variablesOf(id).TOKEN_ISSUER, id).toBe('https://auth.parcel-carrier.example/prod');
    }
    // formerTokenIssuers: the verifiers accept tokens of no other issuer.
    for (const id of [
      'AuthorizerLambdaFunction',
      'RefreshLambdaFunction',
      'LogoutLambdaFunction',
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
    // The token endpoint's 405: the provider's variables only, no key, table or issuer of any kind.
    expect(variablesOf('OauthWrongMethodLambdaFunction')).toEqual({ STAGE: 'prod', LOG_LEVEL: 'info' });
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
    const names = [
      '"PasswordField"',
      '"/password"',
      '"passwordHash"',
      // The attribute of a client item holding its secrets' ids and digests, which the authorizer may read.
      '"secrets"',
      ...metricNames.flatMap((n) => [n, n[0]?.toLowerCase() + n.slice(1)]),
    ];
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

  it('shows requests, errors, latency, logins, client grants, lockouts, locks refused and spared, reuse, authorizer denies, throttles and the alarms', () => {
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

  it('limits requests per source address on the login, login-extended, refresh and OAuth token, revocation and introspection routes only', () => {
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
