/**
 * The stage parameters the admin CLI reads as serverless.yml takes them from lib/settings.ts
 * (infra/stage-params.ts): the KMS key a stage's signing keyring is written with, and the highest
 * bcrypt cost an import accepts.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  KmsKeyArnSchema,
  keyringKmsKey,
  readStageParams,
  serverlessParams,
} from '../../infra/stage-params.ts';

describe('stage parameter kmsKeyArn', () => {
  it.each([
    ['empty: the AWS-managed key', ''],
    ['a key ARN', 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'],
    [
      'a key ARN in aws-cn',
      'arn:aws-cn:kms:cn-north-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    ],
    [
      'a key ARN in aws-us-gov',
      'arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab',
    ],
  ])('accepts %s', (_name, value) => {
    expect(v.safeParse(KmsKeyArnSchema, value).success).toBe(true);
  });

  it.each([
    [
      'an alias ARN (IAM cannot grant kms:Decrypt on it)',
      'arn:aws:kms:eu-central-1:123456789012:alias/parcel-auth',
    ],
    ['an alias name', 'alias/parcel-auth'],
    ['a bare key id', '1234abcd-12ab-34cd-56ef-1234567890ab'],
    ['another service’s ARN', 'arn:aws:ssm:eu-central-1:123456789012:parameter/x'],
  ])('refuses %s', (_name, value) => {
    expect(v.safeParse(KmsKeyArnSchema, value).success).toBe(false);
  });

  it('is unset on every stage lib/settings.ts defines but prod: local and dev keep the AWS-managed key', () => {
    for (const stage of ['local', 'dev']) expect(readStageParams(stage).kmsKeyArn, stage).toBeUndefined();
  });

  it('names the stack’s own key by its alias on a stage that creates one (prod)', () => {
    expect(readStageParams('prod').kmsKeyArn).toBe('alias/parcel-auth-prod-keyring');
    expect(keyringKmsKey('prod', { kmsKeyArn: '', createKeyringKey: 'true' })).toBe(
      'alias/parcel-auth-prod-keyring',
    );
    expect(keyringKmsKey('qa', { kmsKeyArn: '', createKeyringKey: 'false' })).toBeUndefined();
  });

  it('prefers the stage parameter kmsKeyArn over the stack’s own key, as the template does', () => {
    const key = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    expect(keyringKmsKey('prod', { kmsKeyArn: key, createKeyringKey: 'true' })).toBe(key);
  });
});

describe('stage parameter importBcryptMaxCost', () => {
  /** serverless.yml's params with `prod`'s block changed. */
  const withProd = (changes: Record<string, unknown>) => {
    const params = serverlessParams();
    return { ...params, prod: { ...params.prod, ...changes } };
  };

  it('accepts at least cost 12 (Rails’, Django’s and Laravel’s default) on every stage, a stage of another name too', () => {
    for (const stage of ['local', 'dev', 'prod', 'qa']) {
      const params = readStageParams(stage, {});
      expect(params.importBcryptMaxCost, stage).toBeGreaterThanOrEqual(12);
      expect(params.importBcryptMaxCost, stage).toBeGreaterThanOrEqual(params.bcryptCost);
    }
  });

  it('is read from the stage’s own block', () => {
    expect(readStageParams('prod', {}, withProd({ importBcryptMaxCost: 14 })).importBcryptMaxCost).toBe(14);
  });

  it.each([
    [
      'below the stage’s own bcryptCost (an export of the stage would not import back)',
      { bcryptCost: 12, importBcryptMaxCost: 11 },
    ],
    ['above 15 (a compare at a smaller login memory nears the timeout)', { importBcryptMaxCost: 16 }],
    ['not a whole number', { importBcryptMaxCost: 12.5 }],
  ])('refuses one %s, naming it', (_name, changes) => {
    expect(() => readStageParams('prod', {}, withProd(changes))).toThrow(/importBcryptMaxCost/);
  });
});

describe('stage parameters customDomainName and tokenIssuer', () => {
  const withProd = (changes: Record<string, unknown>) => ({
    ...serverlessParams(),
    prod: { ...serverlessParams().prod, ...changes },
  });
  const certificate =
    'arn:aws:acm:eu-central-1:123456789012:certificate/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('accepts a custom domain whose issuer is its own origin, where discovery by issuer finds the metadata', () => {
    const stage = withProd({
      customDomainName: 'auth.parcel-carrier.example',
      customDomainCertificateArn: certificate,
      tokenIssuer: 'https://auth.parcel-carrier.example',
    });
    expect(() => readStageParams('prod', {}, stage)).not.toThrow();
  });

  it.each([
    [
      'an issuer with the stage in its path',
      { tokenIssuer: 'https://auth.parcel-carrier.example/prod' },
      /tokenIssuer must be https:\/\/auth\.parcel-carrier\.example/,
    ],
    ['no certificate', { customDomainCertificateArn: '' }, /go together/],
    [
      'a certificate of another service',
      { customDomainCertificateArn: 'arn:aws:kms:eu-central-1:123456789012:key/x' },
      /customDomainCertificateArn/,
    ],
  ])('refuses a custom domain with %s', (_name, changes, message) => {
    const stage = withProd({
      customDomainName: 'auth.parcel-carrier.example',
      customDomainCertificateArn: certificate,
      tokenIssuer: 'https://auth.parcel-carrier.example',
      ...changes,
    });
    expect(() => readStageParams('prod', {}, stage)).toThrow(message);
  });
});
