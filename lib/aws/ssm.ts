/** Reads and writes SSM parameters: where AWS stages keep their signing key and public key set. */
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

let client: SSMClient | undefined;
const ssm = (region: string) => {
  client ??= new SSMClient({ region });
  return client;
};

/** The decrypted value of a parameter. SecureString values are decrypted with the parameter's KMS key. */
export async function readParameter(region: string, name: string): Promise<string> {
  const result = await ssm(region).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  const value = result.Parameter?.Value;
  if (value === undefined) throw new Error(`SSM parameter ${name} has no value`);
  return value;
}

/** Writes a parameter; the value travels in the request body, never on a command line. */
export async function writeParameter(
  region: string,
  name: string,
  value: string,
  options: { secure: boolean; overwrite: boolean },
): Promise<void> {
  await ssm(region).send(
    new PutParameterCommand({
      Name: name,
      Value: value,
      Type: options.secure ? 'SecureString' : 'String',
      Overwrite: options.overwrite,
    }),
  );
}
