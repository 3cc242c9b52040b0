/** Reads and writes SSM parameters: where AWS stages keep their signing key and public key set. */
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { AWS_REQUESTS, MAX_ATTEMPTS } from './requests.ts';

const clients = new Map<string, SSMClient>();
/** One client per region, built on first use and kept for the container's life. */
const ssm = (region: string) => {
  let client = clients.get(region);
  if (client === undefined) {
    // Bounded like DynamoDB's: a hanging SSM call must not hold a request until the Lambda times out.
    client = new SSMClient({ region, maxAttempts: MAX_ATTEMPTS, requestHandler: AWS_REQUESTS });
    clients.set(region, client);
  }
  return client;
};

/** The decrypted value of a parameter. SecureString values are decrypted with the parameter's KMS key. */
export async function readParameter(region: string, name: string): Promise<string> {
  const result = await ssm(region).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  const value = result.Parameter?.Value;
  if (value === undefined) throw new Error(`SSM parameter ${name} has no value`);
  return value;
}

/** Whether a parameter exists. Reads it without decryption: a secret's value is never fetched. */
export async function parameterExists(region: string, name: string): Promise<boolean> {
  try {
    await ssm(region).send(new GetParameterCommand({ Name: name, WithDecryption: false }));
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ParameterNotFound') return false;
    throw error;
  }
}

/**
 * Writes a parameter; the value travels in the request body, never on a command line. A
 * secure one is encrypted with `kmsKeyId` when given, else with the AWS-managed key aws/ssm.
 */
export async function writeParameter(
  region: string,
  name: string,
  value: string,
  options: { secure: boolean; overwrite: boolean; kmsKeyId?: string | undefined },
): Promise<void> {
  await ssm(region).send(
    new PutParameterCommand({
      Name: name,
      Value: value,
      Type: options.secure ? 'SecureString' : 'String',
      Overwrite: options.overwrite,
      ...(options.secure && options.kmsKeyId !== undefined && { KeyId: options.kmsKeyId }),
    }),
  );
}
