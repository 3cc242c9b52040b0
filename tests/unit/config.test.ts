import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { functionEnvironment, functionNames } from '../../infra/function-env.ts';
import type { Env } from '../../lib/config/environment.ts';
import { readLogConfig } from '../../lib/config/log.ts';
import * as schemas from '../../lib/config/schemas.ts';
import * as config from '../../lib/config.ts';
import {
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
import { ENVIRONMENT, FUNCTIONS, SETTINGS } from '../../lib/settings.ts';

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

  it('gives the token endpoint the client token lifetime, a platform’s refresh token lifetime and grace, both key sources and the login throttle', () => {
    const env = {
      ...loginEnv,
      CLIENT_TOKEN_TTL: '30m',
      REFRESH_REUSE_GRACE: '30s',
      VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks',
    };
    const config = readOAuthTokenConfig(env);
    expect(config.tokens).toEqual({
      issuer: 'https://auth.example/prod',
      formerIssuers: [],
      audience: 'https://api.example/prod',
      accessTtlSeconds: 1800,
      refreshTtlSeconds: 30 * 86_400,
    });
    expect(config.connections).toEqual({ maxLifetimeSeconds: 30 * 86_400, reuseGraceSeconds: 30 });
    expect(config.keys.sources).toEqual({
      signingKeyring: { kind: 'ssm', name: '/parcel-auth/prod/signing-keyring' },
      verificationKeys: { kind: 'ssm', name: '/parcel-auth/prod/jwks' },
    });
    expect(config.loginThrottleTable).toBe('parcel-auth-prod-login-throttle');
    expect(() => readOAuthTokenConfig({ ...env, CLIENT_TOKEN_TTL: '0s' })).toThrow(/CLIENT_TOKEN_TTL/);
    expect(() => readOAuthTokenConfig({ ...env, CLIENT_TOKEN_TTL: '25h' })).toThrow(
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
    const env = {
      ...loginEnv,
      CLIENT_TOKEN_TTL: '1h',
      REFRESH_REUSE_GRACE: '30s',
      VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks',
    };
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

describe('the log level', () => {
  it('is LOG_LEVEL in any case, and info when it is unset or a level the logger does not know', () => {
    expect(readLogConfig({ LOG_LEVEL: 'warn' }).level).toBe('warn');
    expect(readLogConfig({ LOG_LEVEL: 'DEBUG' }).level).toBe('debug');
    expect(readLogConfig({}).level).toBe('info');
    // The local stage passes the shell's on, a name other tools set too.
    expect(readLogConfig({ LOG_LEVEL: 'verbose' }).level).toBe('info');
  });
});

const ROOT = resolve(import.meta.dirname, '../..');
const serverless: {
  params: unknown;
  provider: { environment: unknown };
  functions: Record<string, { handler: string; environment?: unknown }>;
} = parse(readFileSync(resolve(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'silent' });

type Entry = {
  readonly variable?: string;
  readonly readBy?: string;
  readonly everyFunction?: true;
  readonly value?: string;
  readonly bounds?: { readonly min?: string | number; readonly max?: string | number };
};
/** lib/settings.ts's entries as this test reads them. */
const entries = (record: object) => Object.entries(record) as [string, Entry][];
const words = (list: string | undefined) => (list === undefined ? [] : list.split(' '));
/** Each variable of lib/settings.ts: a setting's or another one, and the functions it says read it. */
const VARIABLES: readonly (readonly [string, Entry])[] = [
  ...entries(SETTINGS).flatMap(([, setting]) =>
    setting.variable === undefined ? [] : [[setting.variable, setting] as const],
  ),
  ...entries(ENVIRONMENT),
];
const readByManifest = (fn: string) =>
  VARIABLES.filter(([, entry]) => entry.readBy === 'every function' || words(entry.readBy).includes(fn))
    .map(([variable]) => variable)
    .sort();

/** The keys `read` looks up in `env`, whether it accepts it or not. */
function variablesRead(read: (env: Env) => unknown, env: Env): string[] {
  const seen = new Set<string>();
  const recording = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key);
      return Reflect.get(target, key);
    },
    has(target, key) {
      if (typeof key === 'string') seen.add(key);
      return Reflect.has(target, key);
    },
  });
  try {
    read(recording);
  } catch {
    // A variable it lacks fails it: what it looked up is recorded all the same.
  }
  return [...seen];
}

/** The files of this repository `file` imports, itself and transitively. */
function reached(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const source = readFileSync(resolve(ROOT, file), 'utf8');
  for (const [, path] of source.matchAll(/(?:from|import)\s*'(\.[^']+)'/g))
    if (path?.endsWith('.ts')) reached(resolve(ROOT, file, '..', path).slice(ROOT.length + 1), seen);
  return seen;
}

type Reader = (env: Env) => unknown;
const READERS = (Object.entries(config) as [string, Reader][]).filter(([name]) =>
  /^read\w+Config$/.test(name),
);

/** What function `fn`'s code reads from its environment: its config readers' and its logger's variables. */
function readByCode(fn: string, env: Env): string[] {
  const handler = `${serverless.functions[fn]?.handler.replace(/\.handler$/, '')}.ts`;
  const files = reached(handler);
  const code = [...files].map((file) => readFileSync(resolve(ROOT, file), 'utf8')).join('\n');
  const readers: Reader[] = [
    ...READERS.filter(([name]) => new RegExp(`\\b${name}\\(`).test(code)).map(([, read]) => read),
    ...(files.has('lib/log.ts') ? [readLogConfig] : []),
  ];
  return [...new Set(readers.flatMap((read) => variablesRead(read, env)))].sort();
}

describe('the stage settings of lib/settings.ts', () => {
  it('names the functions of serverless.yml, and only those, as readers', () => {
    const names = functionNames();
    expect(words(FUNCTIONS).sort()).toEqual([...names].sort());
    for (const [variable, entry] of VARIABLES) {
      if (entry.readBy === 'every function') continue;
      for (const fn of words(entry.readBy)) expect(names, `${variable} read by ${fn}`).toContain(fn);
    }
  });

  it('is read from the environment by lib/config/ alone, once per container', () => {
    const sources = ['lib', 'functions'].flatMap((top) =>
      readdirSync(resolve(ROOT, top), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `${top}/${file}`),
    );
    const reading = sources.filter((file) =>
      readFileSync(resolve(ROOT, file), 'utf8').includes('process.env'),
    );
    expect(reading.sort()).toEqual(['lib/config.ts', 'lib/config/log.ts']);
  });

  for (const fn of words(FUNCTIONS)) {
    it(`has ${fn} read exactly the variables it names ${fn} a reader of, each given to it`, () => {
      // Lambda sets a variable of lib/settings.ts without a value (AWS_REGION) itself.
      const lambda = entries(ENVIRONMENT)
        .filter(([, entry]) => entry.value === undefined)
        .map(([variable]) => variable);
      const env = {
        ...functionEnvironment(fn, 'prod', {}),
        ...Object.fromEntries(lambda.map((name) => [name, 'x'])),
      };
      const read = readByCode(fn, env);
      expect(read, `${fn}: what its code reads`).toEqual(readByManifest(fn));
      expect(read.filter((variable) => !(variable in env))).toEqual([]);
      // What it is given and does not read is only what every function gets (serverless.yml's
      // provider, and Lambda).
      const everyFunction = [
        ...VARIABLES.filter(([, entry]) => entry.everyFunction).map(([variable]) => variable),
        ...lambda,
      ];
      expect(
        Object.keys(env).filter((variable) => !read.includes(variable) && !everyFunction.includes(variable)),
      ).toEqual([]);
    });
  }

  it('is where serverless.yml takes every stage’s params, what every function gets and each function’s environment', () => {
    const from = (address: string) => `\${file(./infra/settings.cjs):${address}}`;
    expect(serverless.params).toBe(from('params'));
    expect(serverless.provider.environment).toBe(from('providerEnvironment'));
    for (const [fn, definition] of Object.entries(serverless.functions)) {
      const own = Object.keys(functionEnvironment(fn, 'prod', {})).filter(
        (variable) =>
          !VARIABLES.some(
            ([name, entry]) =>
              name === variable && (entry.everyFunction || entry.readBy === 'every function'),
          ),
      );
      expect(definition.environment, fn).toBe(own.length === 0 ? undefined : from(`environment.${fn}`));
    }
  });

  it('bounds each setting a function reads as its schema does: the bound passes, a second or a unit beyond it fails naming it', () => {
    const beyond = (bound: string | number, step: number) =>
      typeof bound === 'number' ? String(bound + step) : `${schemas.inSeconds(bound) + step}s`;
    const bounded = entries(SETTINGS)
      .map(([, setting]) => setting)
      .filter((setting) => setting.variable !== undefined && setting.bounds !== undefined);
    expect(bounded.length).toBeGreaterThan(5);
    for (const { variable = '', bounds = {} } of bounded) {
      const schema = (schemas as unknown as Record<string, () => v.GenericSchema>)[variable]?.();
      expect(schema, variable).toBeDefined();
      if (schema === undefined) continue;
      const issue = (text: string) => v.safeParse(schema, text).issues?.[0]?.message;
      const { min, max } = bounds;
      if (min !== undefined) {
        expect(issue(String(min)), `${variable} ${min}`).toBeUndefined();
        if (schemas.inSeconds(min) > 0)
          expect(issue(beyond(min, -1)), variable).toBe(`must be at least ${min}`);
        else expect(issue(beyond(min, -1)), variable).toBeDefined();
      }
      if (max !== undefined) {
        expect(issue(String(max)), `${variable} ${max}`).toBeUndefined();
        expect(issue(beyond(max, 1)), variable).toBe(`must be at most ${max}`);
      }
    }
  });
});

describe('configuration from serverless.yml', () => {
  // Each function and the config it reads.
  const FUNCTIONS_READING = [
    ['login', readLoginConfig],
    ['loginExtended', readLoginConfig],
    ['refresh', readRefreshConfig],
    ['logout', readLogoutConfig],
    ['authorizer', readAuthorizerConfig],
    ['jwks', readJwksConfig],
    ['createShipment', readShipmentsConfig],
    ['trackShipment', readShipmentsConfig],
    ['oauthToken', readOAuthTokenConfig],
    ['oauthRevoke', readOAuthRevokeConfig],
    ['oauthIntrospect', readOAuthIntrospectConfig],
    ['oauthMetadata', readOAuthMetadataConfig],
    ['customerApi', readCustomerApiConfig],
  ] as const;

  for (const stage of ['prod', 'dev', 'local', 'qa']) {
    for (const [name, read] of FUNCTIONS_READING) {
      it(`gives ${name} on ${stage} every variable its config reads, each valid`, () => {
        // Lambda sets AWS_REGION itself.
        expect(() =>
          read({ ...functionEnvironment(name, stage, {}), AWS_REGION: 'eu-central-1' }),
        ).not.toThrow();
      });
    }
  }
});
