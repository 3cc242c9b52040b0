/** Reads SSM parameters: where AWS stages keep their signing keyring and public key set. */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { AWS_REQUESTS, MAX_ATTEMPTS } from './requests.ts';

const clients = new Map<string, SSMClient>();
/** One client per region, built on first use and kept for the container's life. */
export const ssmClient = (region: string) => {
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
  const result = await ssmClient(region).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  const value = result.Parameter?.Value;
  if (value === undefined) throw new Error(`SSM parameter ${name} has no value`);
  return value;
}
