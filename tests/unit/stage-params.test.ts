/**
 * The stage parameters the admin CLI reads from serverless.yml (infra/stage-params.ts):
 * here the KMS key a stage's signing keyring is written with.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { KmsKeyArnSchema, keyringKmsKey, readStageParams } from '../../infra/stage-params.ts';

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

  it('is unset on every stage serverless.yml defines: local and dev keep the AWS-managed key', () => {
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
