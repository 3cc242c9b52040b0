import { describe, expect, it } from 'vitest';
import { readAuthorizerConfig, readLoginConfig } from '../../lib/config.ts';

const loginEnv = {
  STAGE: 'prod',
  TOKEN_ISSUER: 'https://auth.example/prod',
  TOKEN_AUDIENCE: 'https://api.example/prod',
  ACCESS_TOKEN_TTL: '24h',
  REFRESH_TOKEN_TTL: '30d',
  ACCOUNTS_TABLE: 'parcel-auth-prod-accounts',
  SIGNING_KEY: 'ssm:/parcel-auth/prod/signing-key',
  BCRYPT_COST: '10',
  DYNAMODB_ENDPOINT: '',
};

describe('configuration', () => {
  it('reads the login settings with durations in seconds', () => {
    const config = readLoginConfig(loginEnv);
    expect(config.tokens).toEqual({
      issuer: 'https://auth.example/prod',
      audience: 'https://api.example/prod',
      accessTtlSeconds: 86_400,
      refreshTtlSeconds: 2_592_000,
    });
    expect(config.signingKey).toEqual({ kind: 'ssm', name: '/parcel-auth/prod/signing-key' });
    expect(config.data.dynamodbEndpoint).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads a file key source with its absolute path', () => {
    expect(
      readLoginConfig({ ...loginEnv, SIGNING_KEY: 'file:/data/keys/signing-key.json' }).signingKey,
    ).toEqual({
      kind: 'file',
      path: '/data/keys/signing-key.json',
    });
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
    expect(() => readLoginConfig({ ...rest, ACCESS_TOKEN_TTL: '1 day', SIGNING_KEY: 'key.json' })).toThrow(
      /TOKEN_ISSUER.*ACCESS_TOKEN_TTL.*SIGNING_KEY|TOKEN_ISSUER|ACCESS_TOKEN_TTL/,
    );
    expect(() => readLoginConfig({ ...loginEnv, BCRYPT_COST: '3' })).toThrow(
      /BCRYPT_COST must be at least 4/,
    );
  });

  it('does not need table names or the signing key for the authorizer', () => {
    const config = readAuthorizerConfig({
      STAGE: 'prod',
      TOKEN_ISSUER: 'https://auth.example/prod',
      TOKEN_AUDIENCE: 'https://api.example/prod',
      ACCESS_TOKEN_TTL: '24h',
      VERIFICATION_KEYS: 'ssm:/parcel-auth/prod/jwks',
    });
    expect(config.verificationKeys).toEqual({ kind: 'ssm', name: '/parcel-auth/prod/jwks' });
  });
});
