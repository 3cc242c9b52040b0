/**
 * The template variants of `serverless package` that a change rarely touches (npm run
 * test:long): the dev stage, and prod with the stage parameters an operator may set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStageParams } from '../../infra/stage-params.ts';
import {
  dashboardOf,
  environmentOf,
  evaluateCondition,
  expectDashboardMetricsExist,
  resourcesOfType,
  stageOf,
} from '../support/cloudformation.ts';
import { type Packaged, packageStage, removePackage } from '../support/template.ts';

/** An operator's own key: the stage parameter kmsKeyArn, given on the command line. */
const KMS_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** An operator's own domain for the stage (customDomainName) and its ACM certificate in the stack's region. */
const DOMAIN = 'auth.parcel-carrier.example';
const CERTIFICATE = 'arn:aws:acm:eu-central-1:123456789012:certificate/1234abcd-12ab-34cd-56ef-1234567890ab';
/** The issuer prod has without a domain, kept verifying as the domain becomes the issuer (docs/stages.md). */
const FORMER_ISSUER = 'https://auth.parcel-carrier.example/prod';

/**
 * The prod stage with its own KMS key, X-Ray tracing, the firewall's takeover prevention and a
 * custom domain: one package for the stage parameters an operator may set, each checked on its own.
 */
let customized: Packaged;
/** The prod stage as configured, which the variant is held against. */
let resources: Packaged['resources'];
let defaultDir: string | undefined;
const ofType = (type: string, from: Packaged['resources']) => resourcesOfType(from, type);

beforeAll(async () => {
  // One after the other: two framework processes started together share ~/.serverless.
  ({ dir: defaultDir, resources } = await packageStage('variants-default'));
  customized = await packageStage('options', 'prod', [
    '--param',
    `kmsKeyArn=${KMS_KEY}`,
    '--param',
    'tracing=true',
    '--param',
    'wafAccountTakeoverPrevention=true',
    '--param',
    `customDomainName=${DOMAIN}`,
    '--param',
    `customDomainCertificateArn=${CERTIFICATE}`,
    '--param',
    `tokenIssuer=https://${DOMAIN}`,
    '--param',
    `formerTokenIssuers=${FORMER_ISSUER}`,
  ]);
});
afterAll(async () => {
  await removePackage('variants-default', defaultDir);
  await removePackage('options', customized?.dir);
});

describe('the dev CloudFormation template', () => {
  let dev: Packaged;
  beforeAll(async () => {
    dev = await packageStage('dev', 'dev');
  });
  afterAll(async () => {
    await removePackage('dev', dev?.dir);
  });

  it('creates no KMS key: its keyring stays on the AWS-managed key aws/ssm', () => {
    expect(Object.values(dev.resources).filter((resource) => resource.Type.startsWith('AWS::KMS::'))).toEqual(
      [],
    );
    expect(readStageParams('dev').kmsKeyArn).toBeUndefined();
  });

  it('creates no web ACL: every firewall resource is conditional on wafEnabled, which dev leaves off', () => {
    expect(evaluateCondition(dev.template.Conditions ?? {}, { Condition: 'WafEnabled' })).toBe(false);
    const waf = Object.entries(dev.template.Resources).filter(([, r]) => r.Type.startsWith('AWS::WAFv2::'));
    expect(waf.map(([id]) => id).sort()).toEqual(['WebAcl', 'WebAclAssociation']);
    for (const [id, resource] of waf) expect(resource.Condition, id).toBe('WafEnabled');
  });

  it('has its own dashboard and alarms, on the dev stage’s metrics, and no firewall graph', () => {
    const { widgets } = dashboardOf(dev.resources, 'parcel-auth-dev');
    expectDashboardMetricsExist(dev.resources, widgets, 'dev');
    expect(JSON.stringify(widgets)).not.toContain('AWS/WAFV2');
    const failed = JSON.stringify(dev.template.Resources.FailedLoginsAlarm?.Properties);
    expect(failed).toContain('{"Name":"stage","Value":"dev"}');
    expect(dev.template.Resources.FailedLoginsAlarm?.Properties).toMatchObject({ Threshold: 50 });
    expect(dev.template.Resources.FailedClientAuthAlarm?.Properties).toMatchObject({ Threshold: 10 });
  });
});

describe('the prod template with the stage’s own KMS key and X-Ray tracing (stage parameters)', () => {
  const of = (type: string) => ofType(type, customized.resources);
  type Policy = { PolicyDocument: { Statement: { Action: string[] }[] } };
  const kmsStatements = (roleId: string) =>
    ((customized.resources[roleId]?.Properties.Policies ?? []) as Policy[])
      .flatMap((policy) => policy.PolicyDocument.Statement)
      .filter((statement) => statement.Action.some((action) => action.startsWith('kms:')));

  it('lets exactly the eight roles that read the keyring decrypt with exactly that key, through SSM only', () => {
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
      PasskeyLoginRole: [decrypt],
      RefreshRole: [decrypt],
      LogoutRole: [],
      JwksRole: [],
      AuthorizerRole: [],
      CreateShipmentRole: [],
      TrackShipmentRole: [],
      OAuthTokenRole: [decrypt],
      // Nor does the authorization page: its sign-in and PAR count attempts with that secret.
      OAuthAuthorizeRole: [decrypt],
      // Revocation and introspection sign nothing: the login throttle's counter secret is in the keyring.
      OAuthRevokeRole: [decrypt],
      OAuthIntrospectRole: [decrypt],
      OAuthWrongMethodRole: [],
      OAuthMetadataRole: [],
      // The administrators' API signs nothing either: its unlock keys the counters with that secret.
      CustomerApiRole: [decrypt],
      ConsoleRole: [],
    });
  });

  it('encrypts the alarm topic and every log group with that key', () => {
    expect(customized.resources.AlarmTopic?.Properties.KmsMasterKeyId).toBe(KMS_KEY);
    const groups = of('AWS::Logs::LogGroup');
    // Every function's, the access log's: the same as the default template's.
    expect(groups.map(([id]) => id).sort()).toEqual(
      ofType('AWS::Logs::LogGroup', resources)
        .map(([id]) => id)
        .sort(),
    );
    expect(groups).toHaveLength(18);
    expect(groups.map(([id]) => id)).toEqual(
      expect.arrayContaining([
        'OauthRevokeLogGroup',
        'OauthIntrospectLogGroup',
        'OauthWrongMethodLogGroup',
        'CustomerApiLogGroup',
        'ConsoleLogGroup',
      ]),
    );
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

  it('puts takeover prevention in the web ACL and its line on the dashboard with wafAccountTakeoverPrevention', () => {
    const acl = customized.resources.WebAcl?.Properties as { Rules: { Name: string; Priority: number }[] };
    expect(acl.Rules.map((rule) => [rule.Priority, rule.Name])).toEqual([
      [0, 'IpReputation'],
      [1, 'LoginRateLimit'],
      [2, 'BodySizeLimit'],
      [3, 'CommonRuleSet'],
      [4, 'AccountTakeoverPrevention'],
    ]);
    const { widgets } = dashboardOf(customized.resources, 'parcel-auth-prod');
    expectDashboardMetricsExist(customized.resources, widgets, 'prod');
    const firewall = widgets.find((widget) =>
      widget.properties.title?.startsWith('Web application firewall'),
    );
    expect(JSON.stringify(firewall)).toContain('"Rule","AccountTakeoverPrevention"');
    expect(JSON.stringify(firewall)).toContain('"Rule","BodySizeLimit"');
    expect(JSON.stringify(dashboardOf(resources, 'parcel-auth-prod').widgets)).not.toContain(
      'AccountTakeoverPrevention',
    );
  });

  it('changes nothing else: the same resources as the default template, but no key of the stack’s own, and the custom domain’s', () => {
    expect(
      Object.keys(customized.resources)
        .filter((id) => !/Deployment|Version|^ApiDomainName$|^ApiBasePathMapping$/.test(id))
        .sort(),
    ).toEqual(
      Object.keys(resources)
        .filter((id) => !/Deployment|Version|^KeyringKey/.test(id))
        .sort(),
    );
    expect(Object.keys(resources)).toEqual(expect.arrayContaining(['KeyringKey', 'KeyringKeyAlias']));
  });
});

describe('the prod template with a custom domain (stage parameters)', () => {
  it('creates the domain name, regional, with the stage’s certificate and TLS 1.2 at least', () => {
    expect(customized.template.Conditions?.HasCustomDomain).toEqual({
      'Fn::Not': [{ 'Fn::Equals': [DOMAIN, ''] }],
    });
    expect(customized.resources.ApiDomainName).toEqual({
      Type: 'AWS::ApiGateway::DomainName',
      Condition: 'HasCustomDomain',
      Properties: {
        DomainName: DOMAIN,
        RegionalCertificateArn: CERTIFICATE,
        EndpointConfiguration: { Types: ['REGIONAL'] },
        SecurityPolicy: 'TLS_1_2',
      },
    });
  });

  it('maps the domain’s root (no base path) to the stage, once the Deployment that creates the stage exists', () => {
    const deployments = ofType('AWS::ApiGateway::Deployment', customized.resources);
    expect(deployments).toHaveLength(1);
    const [deployment = ''] = deployments.map(([id]) => id);
    expect(customized.resources[deployment]?.Properties.StageName).toBe('prod');
    expect(customized.resources.ApiBasePathMapping).toEqual({
      Type: 'AWS::ApiGateway::BasePathMapping',
      Condition: 'HasCustomDomain',
      Properties: {
        DomainName: { Ref: 'ApiDomainName' },
        RestApiId: { Ref: 'ApiGatewayRestApi' },
        Stage: 'prod',
      },
      DependsOn: [deployment],
    });
  });

  it('outputs the domain name’s regional target, where the domain’s DNS record points', () => {
    const outputs = (customized.template as Packaged['template'] & { Outputs?: Record<string, unknown> })
      .Outputs;
    expect(outputs?.ApiDomainTarget).toEqual({
      Condition: 'HasCustomDomain',
      Description: expect.any(String),
      Value: { 'Fn::GetAtt': ['ApiDomainName', 'RegionalDomainName'] },
    });
  });

  it('issues tokens as the domain, and keeps verifying the stage’s former issuer', () => {
    const variables = (id: string) => environmentOf(customized.resources, id);
    const withIssuer = ofType('AWS::Lambda::Function', customized.resources)
      .map(([id]) => id)
      .filter((id) => variables(id).TOKEN_ISSUER !== undefined);
    // The metadata's issuer is what clients discover the domain by (RFC 8414 section 3).
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
    for (const id of withIssuer) expect(variables(id).TOKEN_ISSUER, id).toBe(`https://${DOMAIN}`);
    // Every function that verifies tokens: revocation and introspection as the authorizer.
    for (const id of [
      'AuthorizerLambdaFunction',
      'RefreshLambdaFunction',
      'LogoutLambdaFunction',
      'OauthRevokeLambdaFunction',
      'OauthIntrospectLambdaFunction',
      // The token endpoint verifies a platform's refresh token.
      'OauthTokenLambdaFunction',
    ]) {
      expect(variables(id).FORMER_TOKEN_ISSUERS, id).toBe(FORMER_ISSUER);
    }
  });
});
