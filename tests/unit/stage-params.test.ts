/**
 * The stage parameters the admin CLI reads from serverless.yml (scripts/local/stage-params.ts):
 * here the KMS key a stage may name for its signing keyring.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { KmsKeyArnSchema, readStageParams } from '../../scripts/local/stage-params.ts';

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

  it('is unset on every stage serverless.yml defines: they keep the AWS-managed keys', () => {
    for (const stage of ['local', 'dev', 'prod'])
      expect(readStageParams(stage).kmsKeyArn, stage).toBeUndefined();
  });
});
