// biome-ignore-all lint/suspicious/noTemplateCurlyInString: values are written as serverless.yml reads them.
/**
 * The stage settings, declared once: each one's parameter (its key), the variable its functions read,
 * its default and per-stage values, its bounds, the functions that read it and what it changes.
 * serverless.yml takes the stages' params and the functions' environments from here
 * (infra/settings.cjs), lib/config/ the bounds, dev/settings-docs.ts the tables of docs/stages.md and
 * docs/local-stack.md. Values are written as serverless.yml reads them: `${env:NAME, 'fallback'}`
 * (the local stage's overrides), `${sls:stage}`, `${self:service}`.
 */

import type { Setting, Variable, Words } from './config/shape.ts';

/** The functions that start a user's session: they sign its tokens, so most of the token settings are theirs. */
const SESSION_STARTERS = 'login loginExtended passkeyLogin';
/** serverless.yml's functions. */
export const FUNCTIONS = `${SESSION_STARTERS} refresh logout oauthToken oauthAuthorize oauthRevoke oauthIntrospect oauthWrongMethod oauthMetadata jwks authorizer createShipment trackShipment customerApi console`;
export type FunctionName = Words<typeof FUNCTIONS>;
/** The named stages; `default` is what any other stage gets, and what a named stage leaves out. */
export const STAGES = ['local', 'dev', 'prod'] as const;
export type Stage = (typeof STAGES)[number];

// The bounds the functions check, one export each, so a function's bundle carries only its own.
export const CLIENT_TOKEN_TTL = { max: '24h' } as const;
export const REFRESH_REUSE_GRACE = { min: '0s', max: '60s' } as const;
export const REVOCATION_CACHE_TTL = { min: '0s' } as const;
export const BCRYPT_COST = { min: 4, max: 15 } as const;
export const KNOWN_SOURCE_PERIOD = { min: '0s', max: '90d' } as const;
export const LOGIN_INFLIGHT_LIMIT = { min: 1, max: 9999 } as const;
export const LOGIN_LOCKOUT_MAX = { max: '24h' } as const;
export const AUDIT_RETENTION = { min: '1d' } as const;

/** Every stage setting, in the order of docs/stages.md. */
export const SETTINGS = {
  accessTokenTtl: {
    variable: 'ACCESS_TOKEN_TTL',
    readBy: `${SESSION_STARTERS} refresh logout oauthRevoke oauthIntrospect authorizer`,
    // dev: short, so integrators meet refresh early.
    values: { default: '24h', local: "${env:ACCESS_TOKEN_TTL, '24h'}", dev: '1h', prod: '24h' },
    description: 'access token lifetime, and the `expireAt` of login-extended',
  },
  refreshTokenTtl: {
    variable: 'REFRESH_TOKEN_TTL',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke`,
    values: { default: '30d', local: '30d', dev: '7d', prod: '30d' },
    description: 'refresh token lifetime; a connection unused this long ends ([platforms](platforms.md))',
  },
  clientTokenTtl: {
    variable: 'CLIENT_TOKEN_TTL',
    readBy: 'oauthToken oauthRevoke oauthIntrospect authorizer customerApi',
    values: { default: '1h', local: "${env:CLIENT_TOKEN_TTL, '1h'}", dev: '1h', prod: '1h' },
    // Short, as a client asks again with its secret: a stolen token is bounded by it.
    bounds: CLIENT_TOKEN_TTL,
    description:
      "lifetime of an API client's access token (`expires_in`, [clients](clients.md)), never refreshed, and of a platform's ([platforms](platforms.md))",
  },
  sessionMaxLifetime: {
    variable: 'SESSION_MAX_LIFETIME',
    readBy: `${SESSION_STARTERS} refresh`,
    values: { default: '90d' },
    description: 'absolute lifetime of a session (a chain of refresh tokens): refreshing never extends it',
  },
  refreshReuseGrace: {
    variable: 'REFRESH_REUSE_GRACE',
    readBy: 'refresh oauthToken',
    values: { default: '30s', local: "${env:REFRESH_REUSE_GRACE, '30s'}" },
    // For a lost answer's retry; a long one would let a thief in as well.
    bounds: REFRESH_REUSE_GRACE,
    description:
      'how long the refresh token spent last may be presented again, for a retry whose answer was lost (zero: never; [the trade](tokens-and-sessions.md#sessions-rotation-reuse-detection-logout-and-revocation))',
  },
  authorizerCacheTtl: {
    values: { default: 300, local: 0, dev: 60, prod: 300 },
    description: 'seconds API Gateway caches an authorizer decision per token (zero: none; an hour at most)',
  },
  revocationCacheTtl: {
    variable: 'REVOCATION_CACHE_TTL',
    readBy: 'oauthIntrospect authorizer',
    values: { default: '30s', local: "${env:REVOCATION_CACHE_TTL, '1s'}" },
    bounds: REVOCATION_CACHE_TTL,
    description: "how long an authorizer container (and introspection) trusts a user's state it read",
  },
  keyReloadInterval: {
    variable: 'KEY_RELOAD_INTERVAL',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect jwks authorizer customerApi oauthAuthorize`,
    values: { default: '5m', local: "${env:KEY_RELOAD_INTERVAL, '2s'}" },
    description:
      'how often every function re-reads key material (when a rotation takes effect); JWKS `max-age`',
  },
  bcryptCost: {
    variable: 'BCRYPT_COST',
    readBy: 'login loginExtended oauthAuthorize',
    values: { default: 10, local: 8, dev: 10, prod: 10 },
    // At most the last cost whose compare (about 6 s at 512 MB) ends inside the login's timeout.
    bounds: BCRYPT_COST,
    description: 'bcrypt cost of new hashes and of the dummy hash; lower-cost hashes are upgraded at login',
  },
  importBcryptMaxCost: {
    // prod: one full vCPU (loginMemorySize), where a cost-13 compare takes about half a second.
    values: { default: 12, local: 12, dev: 12, prod: 13 },
    // What a compare at the smallest login memory affords inside the timeout, as bcryptCost.
    bounds: { max: 15 },
    description:
      "the highest bcrypt cost an import accepts, at least `bcryptCost`: what a login's compare affords at `loginMemorySize`; such a hash is re-hashed at `bcryptCost` at its first login ([why](import-format.md#hashes-above-the-stages-cost))",
  },
  loginFailureLimit: {
    variable: 'LOGIN_FAILURE_LIMIT',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: 5, local: "${env:LOGIN_FAILURE_LIMIT, '5'}", dev: 5, prod: 5 },
    description:
      'failures per username or client id before it is throttled for the sources it does not know, and per known source on its own counter (zero: off)',
  },
  loginFailureWindow: {
    variable: 'LOGIN_FAILURE_WINDOW',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '24h' },
    description:
      "a username's counter starts again from zero after a whole window-long period without an attempt (one to two windows: [the login throttle](behaviour.md#brute-force-the-login-throttle))",
  },
  ipFailureLimit: {
    variable: 'IP_FAILURE_LIMIT',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: 100, local: "${env:IP_FAILURE_LIMIT, '100'}", dev: 100, prod: 100 },
    description:
      "people's failed logins per source address before it is throttled, and the attempts from it checked at once (zero: off)",
  },
  ipFailureWindow: {
    variable: 'IP_FAILURE_WINDOW',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '1h' },
    description: "an address's counter starts again from zero after a window-long period without an attempt",
  },
  clientIpFailureLimit: {
    variable: 'CLIENT_IP_FAILURE_LIMIT',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: 50, local: "${env:CLIENT_IP_FAILURE_LIMIT, '50'}", dev: 50, prod: 50 },
    description:
      "API clients' failed authentications per source address before it is throttled for API clients, counted apart from people's logins (a machine retrying a removed secret does not lock the people behind its address), and the authentications from it checked at once (zero: off)",
  },
  clientIpFailureWindow: {
    variable: 'CLIENT_IP_FAILURE_WINDOW',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '1h' },
    description: 'the same as `ipFailureWindow`, for that counter',
  },
  loginLockoutBase: {
    variable: 'LOGIN_LOCKOUT_BASE',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '30s', local: '30s', dev: '30s', prod: '30s' },
    description:
      'the first lock, doubled by each further failure up to `loginLockoutMax`, which it may not exceed ([the login throttle](behaviour.md#brute-force-the-login-throttle))',
  },
  loginLockoutMax: {
    variable: 'LOGIN_LOCKOUT_MAX',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '15m', local: '15m', dev: '15m', prod: '15m' },
    // A lock always ends, and soon.
    bounds: LOGIN_LOCKOUT_MAX,
    description: 'the longest lock',
  },
  knownSourcePeriod: {
    variable: 'KNOWN_SOURCE_PERIOD',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: '30d', local: "${env:KNOWN_SOURCE_PERIOD, '30d'}", dev: '30d', prod: '30d' },
    bounds: KNOWN_SOURCE_PERIOD,
    description:
      "how long after a success from a source (an address, an IPv6 /64) it stays known to that username or client id: while the name is locked, it is counted on a counter of its own instead, so others' failures do not refuse it (zero: off; [known sources](behaviour.md#brute-force-the-login-throttle))",
  },
  loginInflightLimit: {
    variable: 'LOGIN_INFLIGHT_LIMIT',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    values: { default: 50, local: "${env:LOGIN_INFLIGHT_LIMIT, '50'}", dev: 50, prod: 50 },
    bounds: LOGIN_INFLIGHT_LIMIT,
    description:
      "attempts of one username or client id checked at once from a source it knows (started in one 30-second slot, not yet decided), right or wrong: a fleet logging in together from the integration's address is not refused below it; everyone else's attempts in flight count against `loginFailureLimit` as failures would ([the trade](behaviour.md#brute-force-the-login-throttle)); never below `loginFailureLimit`",
  },
  // serverless-offline does not emulate API Gateway throttling: the local stage's reach the template only.
  apiRateLimit: {
    values: { default: 200, local: 200, dev: 50, prod: 200 },
    description:
      'API Gateway stage throttling, all routes together: requests per second, above which API Gateway answers 429 itself, before any function runs (not emulated locally)',
  },
  apiBurstLimit: {
    values: { default: 400, local: 400, dev: 100, prod: 400 },
    description: 'the same, burst',
  },
  loginRateLimit: {
    variable: 'LOGIN_RATE_LIMIT',
    readBy: 'login loginExtended refresh oauthToken',
    values: { default: 50, local: 50, dev: 10, prod: 50 },
    description:
      'API Gateway throttling of each of `POST /login`, `/login-extended`, `/token/refresh`, `/oauth/token`, `/oauth/revoke`, `/oauth/introspect`, `/oauth/par`, `/oauth/authorize`, within `apiRateLimit`; published as the `route` policy ([published limits](behaviour.md#brute-force-the-login-throttle))',
  },
  loginBurstLimit: {
    values: { default: 100, local: 100, dev: 20, prod: 100 },
    description: 'the same, burst',
  },
  logLevel: {
    variable: 'LOG_LEVEL',
    readBy: 'every function',
    values: { default: 'info', local: "${env:LOG_LEVEL, 'info'}", dev: 'debug', prod: 'info' },
    description: 'log level of the functions: `debug`, `info`, `warn` or `error`',
  },
  logRetentionDays: {
    // local: logs go to the terminal, this matters only if someone deploys a stage "local";
    // prod: a year of logs, for investigating an incident after the fact.
    values: { default: 30, local: 1, dev: 14, prod: 365 },
    description: "days CloudWatch keeps each function's logs and the API's access log",
  },
  tracing: {
    values: { default: false },
    description: 'X-Ray tracing of the API Gateway stage and of every function; traces cost per request',
  },
  kmsKeyArn: {
    values: { default: '' },
    description:
      'a customer-managed KMS key (its key ARN, not an alias) for the signing keyring, the alarm topic and every log group; empty: the AWS-managed keys ([SECURITY.md](../SECURITY.md#encryption) has its key policy)',
  },
  createKeyringKey: {
    // prod: the keyring under a key of its own, so ssm:GetParameter alone does not read it.
    values: { default: 'false', prod: 'true' },
    description:
      "a KMS key of the stack's own for the signing keyring alone (`'true'` or `'false'`, quoted), alias `alias/parcel-auth-<stage>-keyring`: only the roles that read the keyring decrypt, only `operatorRoleArn` writes (`infra/kms.yml`); `kmsKeyArn`, when set, is used instead ([deploying](deploying.md#the-keyrings-own-kms-key))",
  },
  operatorRoleArn: {
    values: { default: 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${self:service}-operator' },
    description:
      "the IAM role operators assume for `keys init` and `keys rotate`, the one principal that may write the keyring under the stack's key; it must exist before the deploy that creates the key",
  },
  alarmTopic: {
    values: {
      default: '${self:service}-${sls:stage}-alarms',
      local: '${self:service}-local-alarms',
      dev: '${self:service}-dev-alarms',
      prod: '${self:service}-prod-alarms',
    },
    description: 'the SNS topic the stack creates and every alarm notifies (subscribe to it after deploy)',
  },
  failedLoginAlarmThreshold: {
    values: { default: 100, local: 100, dev: 50, prod: 200 },
    description: 'failed logins (`LoginFailed`, every reason) per 5 minutes that raise the alarm',
  },
  failedClientAuthAlarmThreshold: {
    values: { default: 20, local: 20, dev: 10, prod: 20 },
    description:
      'failed client authentications (`ClientAuthFailed`, every reason) per 5 minutes that raise the alarm: machines retry with the secret they hold, so a few failures already mean a rotated-away or guessed secret',
  },
  lockoutAlarmThreshold: {
    values: { default: 10 },
    description: 'lockouts started (usernames and addresses) per 5 minutes that raise the alarm',
  },
  credentialsShownAlarmThreshold: {
    values: { default: 20 },
    description: 'new API client credentials (created, added, rolled) per 5 minutes that raise the alarm',
  },
  auditRetention: {
    variable: 'AUDIT_RETENTION',
    readBy: 'oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
    // prod: as long as the logs, who changed which credential a year back.
    values: { default: '90d', prod: '365d' },
    // Long enough that an event outlives the incident it documents.
    bounds: AUDIT_RETENTION,
    description:
      "how long the audit trail keeps an event (a change of a credential, a failed client authentication) before DynamoDB's TTL deletes it, for the OAuth endpoints, the self-service API and the admin CLI alike ([the trail](admin.md#audit-trail))",
  },
  wafEnabled: {
    variable: 'WAF_ENABLED',
    readBy: 'login loginExtended refresh oauthToken',
    values: { default: 'false', dev: 'false', prod: 'true' },
    description:
      "an AWS WAF web ACL in front of the API stage (`infra/waf.yml`; `'true'` or `'false'`, quoted: a CloudFormation condition compares it as a string); off costs nothing",
  },
  wafLoginRateLimit: {
    variable: 'WAF_LOGIN_RATE_LIMIT',
    readBy: 'login loginExtended refresh oauthToken',
    values: { default: 1000, prod: 1000 },
    description:
      "requests per source address in 5 minutes to login, login-extended, refresh and the OAuth token, revocation, introspection, PAR and authorization endpoints together before the web ACL answers 429 (AWS WAF's least is 10); published as the `address-requests` policy where the web ACL exists",
  },
  wafAccountTakeoverPrevention: {
    values: { default: 'false' },
    description:
      "AWS's account takeover prevention rule group on `POST /login` (priced per login inspected; `'true'` or `'false'`, quoted; needs `wafEnabled`)",
  },
  loginMemorySize: {
    // prod: one full vCPU for bcrypt (docs/performance-design.md, "Lambda memory").
    values: { default: 1024, dev: 1024, prod: 1769 },
    bounds: { min: 128, max: 10_240 },
    description:
      "memory (and so CPU) of the login functions, MB: bcrypt is CPU-bound, so a login's latency falls with memory up to one full vCPU at about the same cost ([Lambda memory](performance-design.md#lambda-memory))",
  },
  authorizerMemorySize: {
    values: { default: 512, dev: 512, prod: 1024 },
    description: 'memory of the authorizer, MB',
  },
  memorySize: {
    values: { default: 512, dev: 512, prod: 512 },
    description: 'memory of the other functions, MB: they mostly wait on DynamoDB or SSM',
  },
  tokenIssuer: {
    variable: 'TOKEN_ISSUER',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect oauthMetadata authorizer oauthAuthorize`,
    // local: dev/start.ts sets the stack's own origin, where its metadata is served.
    values: {
      default: 'https://auth.parcel-carrier.example/${sls:stage}',
      local: "${env:TOKEN_ISSUER, 'https://auth.parcel-carrier.example/local'}",
    },
    description:
      "`iss` of every token and of every authorization response (RFC 9207), the metadata's `issuer`, differing between stages, so a token of one stage is refused by another; with a custom domain `https://<customDomainName>` ([Issuer](#issuer-and-discovery))",
  },
  formerTokenIssuers: {
    variable: 'FORMER_TOKEN_ISSUERS',
    readBy: `${SESSION_STARTERS} refresh logout oauthRevoke oauthIntrospect authorizer oauthToken`,
    values: { default: '' },
    description:
      'issuers the stage had before, space-separated: their tokens verify until they expire ([Issuer](#issuer-and-discovery))',
  },
  tokenAudience: {
    variable: 'TOKEN_AUDIENCE',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect authorizer`,
    values: { default: 'https://api.parcel-carrier.example/${sls:stage}' },
    description: '`aud` of access tokens, never the issuer',
  },
  customDomainName: {
    values: { default: '' },
    description:
      "the API's own domain (with `customDomainCertificateArn`, or neither): the API at `https://<domain>/`, the stage's root (`infra/custom-domain.yml`); empty: the execute-api URL",
  },
  customDomainCertificateArn: {
    values: { default: '' },
    description: "the ACM certificate of `customDomainName`, in the stack's region",
  },
  signingKeyring: {
    variable: 'SIGNING_KEYRING',
    readBy: `${SESSION_STARTERS} refresh oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize`,
    // local: written by dev/start.ts under DATA_DIR on first start.
    values: {
      default: 'ssm:/${self:service}/${sls:stage}/signing-keyring',
      local: "file:${env:LOCAL_SIGNING_KEYRING_FILE, '/nonexistent/run-npm-start'}",
    },
    description: 'where the private keyring is read (a SecureString, or a file under `DATA_DIR`)',
  },
  verificationKeys: {
    variable: 'VERIFICATION_KEYS',
    readBy: 'refresh logout oauthRevoke oauthIntrospect jwks authorizer oauthToken',
    values: {
      default: 'ssm:/${self:service}/${sls:stage}/jwks',
      local: "file:${env:LOCAL_JWKS_FILE, '/nonexistent/run-npm-start'}",
    },
    description: 'where the public key set is read (a String, or a file under `DATA_DIR`)',
  },
  dynamodbEndpoint: {
    variable: 'DYNAMODB_ENDPOINT',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect authorizer createShipment trackShipment customerApi oauthAuthorize`,
    // local: dev/start.ts sets it, the embedded DynamoDB's or the one given as DYNAMODB_ENDPOINT.
    values: { default: '', local: "${env:DYNAMODB_ENDPOINT, 'http://127.0.0.1:8000'}" },
    description: 'where the functions reach DynamoDB; empty: AWS',
  },
  tableDeletionProtection: {
    values: { default: false, prod: true },
    description: 'DynamoDB deletion protection',
  },
  tableRemovalPolicy: {
    values: { default: 'Delete', prod: 'Retain' },
    description: 'what happens to the tables when the stack goes',
  },
} as const satisfies Record<string, Setting<Stage>>;

/** The variables the functions read that are no stage parameter. */
export const ENVIRONMENT = {
  STAGE: {
    value: '${sls:stage}',
    everyFunction: true,
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect authorizer customerApi oauthAuthorize`,
  },
  AWS_REGION: {
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect jwks authorizer createShipment trackShipment customerApi oauthAuthorize`,
  },
  ACCOUNTS_TABLE: {
    value: '${self:custom.tables.accounts}',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect authorizer customerApi oauthAuthorize`,
  },
  SESSIONS_TABLE: {
    value: '${self:custom.tables.sessions}',
    readBy: `${SESSION_STARTERS} refresh logout oauthToken oauthRevoke oauthIntrospect oauthAuthorize customerApi createShipment trackShipment`,
  },
  LOGIN_THROTTLE_TABLE: {
    value: '${self:custom.tables.loginThrottle}',
    readBy: 'login loginExtended oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
  },
  SHIPMENTS_TABLE: { value: '${self:custom.tables.shipments}', readBy: 'createShipment trackShipment' },
  AUDIT_TABLE: {
    value: '${self:custom.tables.audit}',
    readBy: 'oauthToken oauthRevoke oauthIntrospect customerApi oauthAuthorize',
  },
} as const satisfies Record<string, Variable>;
