import { describe, expect, it } from 'vitest';
import { functionEnvironment } from '../../infra/function-env.ts';
import {
  CONFIG_VARIABLES,
  readAuthorizerConfig,
  readCustomerApiConfig,
  readJwksConfig,
  readLoginConfig,
  readLogoutConfig,
  readOAuthIntrospectConfig,
  readOAuthMetadataConfig,
  readOAuthRevokeConfig,
  readOAuthTokenConfig,
  readRefreshConfig,
  readShipmentsConfig,
} from '../../lib/config.ts';

const loginEnv = {
  STAGE: 'prod',
  TOKEN_ISSUER: 'https://auth.example/prod',
  TOKEN_AUDIENCE: 'https://api.example/prod',
  ACCESS_TOKEN_TTL: '24h',
  REFRESH_TOKEN_TTL: '30d',
  KEY_RELOAD_INTERVAL: '5m',
  ACCOUNTS_TABLE: 'parcel-auth-prod-accounts',
  SESSIONS_TABLE: 'parcel-auth-prod-sessions',
  SIGNING_KEYRING: 'ssm:/parcel-auth/prod/signing-keyring',
  SESSION_MAX_LIFETIME: '90d',
  BCRYPT_COST: '10',
  DYNAMODB_ENDPOINT: '',
  LOGIN_THROTTLE_TABLE: 'parcel-auth-prod-login-throttle',
  LOGIN_FAILURE_LIMIT: '5',
  LOGIN_FAILURE_WINDOW: '24h',
  IP_FAILURE_LIMIT: '100',
  IP_FAILURE_WINDOW: '1h',
  LOGIN_LOCKOUT_BASE: '30s',
  LOGIN_LOCKOUT_MAX: '15m',
  CLIENT_IP_FAILURE_LIMIT: '50',
  CLIENT_IP_FAILURE_WINDOW: '1h',
  LOGIN_INFLIGHT_LIMIT: '50',
  KNOWN_SOURCE_PERIOD: '30d',
  LOGIN_RATE_LIMIT: '50',
  WAF_ENABLED: 'true',
  WAF_LOGIN_RATE_LIMIT: '1000',
  AUDIT_TABLE: 'parcel-auth-prod-audit',
  AUDIT_RETENTION: '365d',
};

const { BCRYPT_COST: _cost, ...sessionEnv } = loginEnv;

describe('configuration', () => {
  it('reads the login settings with durations in seconds', () => {
    const config = readLoginConfig(loginEnv);
    expect(config.tokens).toEqual({
      issuer: 'https://auth.example/prod',
      formerIssuers: [],
      audience: 'https://api.example/prod',
      accessTtlSeconds: 86_400,
      refreshTtlSeconds: 2_592_000,
    });
    expect(config.keys).toEqual({
      sources: { signingKeyring: { kind: 'ssm', name: '/parcel-auth/prod/signing-keyring' } },
      reloadMs: 300_000,
    });
    expect(config.sessions).toEqual({ maxLifetimeSeconds: 90 * 86_400, reuseGraceSeconds: 0 });
    expect(config.data.dynamodbEndpoint).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the former issuers as a list, and refuses one that is not a URL', () => {
    const former = 'https://auth.example/old https://auth.example/older';
    expect(readLoginConfig({ ...loginEnv, FORMER_TOKEN_ISSUERS: former }).tokens.formerIssuers).toEqual([
      'https://auth.example/old',
      'https://auth.example/older',
    ]);
    expect(() =>
      readLoginConfig({ ...loginEnv, FORMER_TOKEN_ISSUERS: 'https://a.example not-a-url' }),
    ).toThrow(/FORMER_TOKEN_ISSUERS/);
  });

  it('reads a file key source with its absolute path', () => {
    expect(
      readLoginConfig({ ...loginEnv, SIGNING_KEYRING: 'file:/data/keys/signing-keyring.json' }).keys.sources
        .signingKeyring,
    ).toEqual({ kind: 'file', path: '/data/keys/signing-keyring.json' });
  });

  it.each([
    ['5s', 5],
    ['15m', 900],
    ['24h', 86_400],
  ])('reads the duration %s as %i seconds', (text, seconds) => {
    expect(readLoginConfig({ ...loginEnv, ACCESS_TOKEN_TTL: text }).tokens.accessTtlSeconds).toBe(seconds);
  });

  it('fails naming every missing or malformed variable', () => {
    const { TOKEN_ISSUER: _missing, ...rest } = loginEnv;
    expect(() =>
      readLoginConfig({ ...rest, ACCESS_TOKEN_TTL: '1 day', SIGNING_KEYRING: 'key.json' }),
    ).toThrow(/TOKEN_ISSUER.*ACCESS_TOKEN_TTL.*SIGNING_KEYRING/);
    expect(() => readLoginConfig({ ...loginEnv, BCRYPT_COST: '3' })).toThrow(
      /BCRYPT_COST must be at least 4/,
    );
  });

  it('reads the brute-force limits, where 0 turns a counter off', () => {
    const config = readLoginConfig({ ...loginEnv, IP_FAILURE_LIMIT: '0' });
    const lock = { baseLockSeconds: 30, maxLockSeconds: 900 };
    expect(config.throttle).toEqual({
      username: { limit: 5, windowSeconds: 86_400, ...lock, inflightLimit: 50 },
      // An address's attempts in flight are bounded by its failure limit, never below it.
      sourceIp: { limit: 0, windowSeconds: 3600, ...lock, inflightLimit: 0 },
      clientSourceIp: { limit: 50, windowSeconds: 3600, ...lock, inflightLimit: 50 },
      knownSourceSeconds: 30 * 86_400,
    });
    expect(readLoginConfig({ ...loginEnv, KNOWN_SOURCE_PERIOD: '0s' }).throttle.knownSourceSeconds).toBe(0);
    expect(readLoginConfig({ ...loginEnv, LOGIN_INFLIGHT_LIMIT: '2' }).throttle.username.inflightLimit).toBe(
      5,
    );
    expect(() => readLoginConfig({ ...loginEnv, LOGIN_INFLIGHT_LIMIT: '0' })).toThrow(/LOGIN_INFLIGHT_LIMIT/);
    expect(() => readLoginConfig({ ...loginEnv, KNOWN_SOURCE_PERIOD: '91d' })).toThrow(
      /KNOWN_SOURCE_PERIOD must be at most 90d/,
    );
    expect(() => readLoginConfig({ ...loginEnv, LOGIN_FAILURE_LIMIT: '-1' })).toThrow(/LOGIN_FAILURE_LIMIT/);
    // Locks always end, and within a day.
    expect(() => readLoginConfig({ ...loginEnv, LOGIN_LOCKOUT_MAX: '2d' })).toThrow(
      /LOGIN_LOCKOUT_MAX must be at most 24h/,
    );
    expect(() => readLoginConfig({ ...loginEnv, LOGIN_LOCKOUT_BASE: '1h' })).toThrow(
      /LOGIN_LOCKOUT_BASE must not exceed LOGIN_LOCKOUT_MAX/,
    );
  });

  it('publishes the login routes’ API Gateway rate, and the web ACL’s rate only when the web ACL is on', () => {
    expect(readLoginConfig(loginEnv).gatewayLimits).toEqual([
      { name: 'route', quota: 50, windowSeconds: 1 },
      { name: 'address-requests', quota: 1000, windowSeconds: 300 },
    ]);
    expect(readLoginConfig({ ...loginEnv, WAF_ENABLED: 'false' }).gatewayLimits).toEqual([
      { name: 'route', quota: 50, windowSeconds: 1 },
    ]);
    expect(() => readLoginConfig({ ...loginEnv, WAF_ENABLED: 'yes' })).toThrow(/WAF_ENABLED/);
  });

  it('reads the refresh grace window, which may be zero but not a lifetime', () => {
    const env = { ...sessionEnv, VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks' };
    expect(readRefreshConfig({ ...env, REFRESH_REUSE_GRACE: '0s' }).sessions.reuseGraceSeconds).toBe(0);
    expect(readRefreshConfig({ ...env, REFRESH_REUSE_GRACE: '10s' }).sessions.reuseGraceSeconds).toBe(10);
    expect(() => readRefreshConfig({ ...env, REFRESH_REUSE_GRACE: '' })).toThrow(/REFRESH_REUSE_GRACE/);
    expect(() => readLoginConfig({ ...loginEnv, SESSION_MAX_LIFETIME: '0d' })).toThrow(
      /SESSION_MAX_LIFETIME/,
    );
  });

  it('gives logout the accounts table, for the session’s access tokens, but not the signing keyring', () => {
    const { SIGNING_KEYRING: _k, SESSION_MAX_LIFETIME: _l, ...env } = sessionEnv;
    const config = readLogoutConfig({ ...env, VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks' });
    expect(config.keys.sources).toEqual({
      verificationKeys: { kind: 'ssm', name: '/parcel-auth/prod/jwks' },
    });
    expect(config.sessionsTable).toBe('parcel-auth-prod-sessions');
    expect(config.accountsTable).toBe(sessionEnv.ACCOUNTS_TABLE);
    expect(Object.keys(config)).not.toContain('signingKeyring');
  });

  it('gives the authorizer the accounts table and the public keys, not the signing keyring', () => {
    const config = readAuthorizerConfig({
      STAGE: 'prod',
      TOKEN_ISSUER: 'https://auth.example/prod',
      TOKEN_AUDIENCE: 'https://api.example/prod',
      ACCESS_TOKEN_TTL: '24h',
      KEY_RELOAD_INTERVAL: '5m',
      ACCOUNTS_TABLE: 'parcel-auth-prod-accounts',
      VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks',
      REVOCATION_CACHE_TTL: '30s',
      CLIENT_TOKEN_TTL: '1h',
    });
    expect(config.keys.sources).toEqual({
      verificationKeys: { kind: 'ssm', name: '/parcel-auth/prod/jwks' },
    });
    expect(config.revocationCacheTtlMs).toBe(30_000);
    expect(config.tokens.clientAccessTtlSeconds).toBe(3600);
  });

  it('gives the token endpoint the client token lifetime, the signing keyring and the login throttle', () => {
    const config = readOAuthTokenConfig({
      ...loginEnv,
      CLIENT_TOKEN_TTL: '30m',
    });
    expect(config.tokens).toEqual({
      issuer: 'https://auth.example/prod',
      audience: 'https://api.example/prod',
      accessTtlSeconds: 1800,
    });
    expect(config.keys.sources).toEqual({
      signingKeyring: { kind: 'ssm', name: '/parcel-auth/prod/signing-keyring' },
    });
    expect(config.loginThrottleTable).toBe('parcel-auth-prod-login-throttle');
    expect(() => readOAuthTokenConfig({ ...loginEnv, CLIENT_TOKEN_TTL: '0s' })).toThrow(/CLIENT_TOKEN_TTL/);
    expect(() => readOAuthTokenConfig({ ...loginEnv, CLIENT_TOKEN_TTL: '25h' })).toThrow(
      /CLIENT_TOKEN_TTL must be at most 24h/,
    );
  });

  it('gives revocation and introspection the token endpoint’s throttle and the authorizer’s verification', () => {
    const env = {
      ...loginEnv,
      CLIENT_TOKEN_TTL: '30m',
      VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks',
      REVOCATION_CACHE_TTL: '30s',
    };
    const revoke = readOAuthRevokeConfig(env);
    expect(revoke.tokens).toEqual({
      issuer: 'https://auth.example/prod',
      formerIssuers: [],
      audience: 'https://api.example/prod',
      accessTtlSeconds: 86_400,
      clientAccessTtlSeconds: 1800,
    });
    // The keyring for the throttle's counter secret; the key set to verify the token asked about.
    expect(revoke.keys.sources).toEqual({
      signingKeyring: { kind: 'ssm', name: '/parcel-auth/prod/signing-keyring' },
      verificationKeys: { kind: 'ssm', name: '/parcel-auth/prod/jwks' },
    });
    expect(revoke.loginThrottleTable).toBe('parcel-auth-prod-login-throttle');
    expect(revoke).not.toHaveProperty('revocationCacheTtlMs');
    const introspect = readOAuthIntrospectConfig(env);
    expect(introspect.revocationCacheTtlMs).toBe(30_000);
    expect(introspect.tokens).toEqual(revoke.tokens);
    expect(() => readOAuthIntrospectConfig({ ...env, REVOCATION_CACHE_TTL: undefined })).toThrow(
      /REVOCATION_CACHE_TTL/,
    );
    expect(() => readOAuthRevokeConfig({ ...env, TOKEN_AUDIENCE: env.TOKEN_ISSUER })).toThrow(
      /TOKEN_AUDIENCE must differ/,
    );
  });

  it('gives the token, revocation and introspection endpoints the audit table and its retention, a day at least', () => {
    const env = { ...loginEnv, CLIENT_TOKEN_TTL: '1h', VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks' };
    const audit = { table: 'parcel-auth-prod-audit', retentionSeconds: 365 * 86_400 };
    expect(readOAuthTokenConfig(env).audit).toEqual(audit);
    expect(readOAuthRevokeConfig(env).audit).toEqual(audit);
    expect(readOAuthIntrospectConfig({ ...env, REVOCATION_CACHE_TTL: '30s' }).audit).toEqual(audit);
    expect(() => readOAuthTokenConfig({ ...env, AUDIT_RETENTION: '23h' })).toThrow(
      /AUDIT_RETENTION must be at least 1d/,
    );
    expect(() => readOAuthRevokeConfig({ ...env, AUDIT_TABLE: undefined })).toThrow(/AUDIT_TABLE/);
    expect(readLoginConfig(loginEnv)).not.toHaveProperty('audit');
  });

  it('reads the key set source of the JWKS endpoint', () => {
    expect(
      readJwksConfig({ KEY_RELOAD_INTERVAL: '1m', VERIFICATION_KEYS: 'file:/data/keys/jwks.json' }),
    ).toEqual({
      region: 'eu-central-1',
      keys: {
        sources: { verificationKeys: { kind: 'file', path: '/data/keys/jwks.json' } },
        reloadMs: 60_000,
      },
    });
  });
});

describe('configuration from serverless.yml', () => {
  // Each function, the config it reads, and the variables of that config.
  const FUNCTIONS = [
    ['login', readLoginConfig, CONFIG_VARIABLES.login],
    ['loginExtended', readLoginConfig, CONFIG_VARIABLES.login],
    ['refresh', readRefreshConfig, CONFIG_VARIABLES.refresh],
    ['logout', readLogoutConfig, CONFIG_VARIABLES.logout],
    ['authorizer', readAuthorizerConfig, CONFIG_VARIABLES.authorizer],
    ['jwks', readJwksConfig, CONFIG_VARIABLES.jwks],
    ['createShipment', readShipmentsConfig, CONFIG_VARIABLES.shipments],
    ['trackShipment', readShipmentsConfig, CONFIG_VARIABLES.shipments],
    ['oauthToken', readOAuthTokenConfig, CONFIG_VARIABLES.oauthToken],
    ['oauthRevoke', readOAuthRevokeConfig, CONFIG_VARIABLES.oauthRevoke],
    ['oauthIntrospect', readOAuthIntrospectConfig, CONFIG_VARIABLES.oauthIntrospect],
    ['oauthMetadata', readOAuthMetadataConfig, CONFIG_VARIABLES.oauthMetadata],
    ['customerApi', readCustomerApiConfig, CONFIG_VARIABLES.customerApi],
  ] as const;

  for (const stage of ['prod', 'dev', 'local']) {
    for (const [name, read, variables] of FUNCTIONS) {
      it(`gives ${name} on ${stage} every variable its config reads, each valid`, () => {
        const env = functionEnvironment(name, stage, {});
        // Lambda sets AWS_REGION itself.
        expect(variables.filter((variable) => variable !== 'AWS_REGION' && !(variable in env))).toEqual([]);
        expect(() => read({ ...env, AWS_REGION: 'eu-central-1' })).not.toThrow();
      });
    }
  }
});
