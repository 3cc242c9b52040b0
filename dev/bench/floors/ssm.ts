/** The authorizer floor's SSM read, loaded only for an `ssm:` key source, as lib/aws/ssm.ts is. */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

export async function readParameter(name: string): Promise<string> {
  const answer = await new SSMClient({}).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  return String(answer.Parameter?.Value);
}
