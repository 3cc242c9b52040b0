/**
 * Names of a stage's resources, as serverless.yml creates them. The admin CLI and the local
 * stack use these; a template test checks them against the packaged CloudFormation.
 */
export const SERVICE = 'parcel-auth';

export const tableNames = (stage: string) => ({
  accounts: `${SERVICE}-${stage}-accounts`,
  shipments: `${SERVICE}-${stage}-shipments`,
  sessions: `${SERVICE}-${stage}-sessions`,
  loginThrottle: `${SERVICE}-${stage}-login-throttle`,
});

export type TableKey = keyof ReturnType<typeof tableNames>;

/** SSM parameters of an AWS stage's keys: the private keyring (SecureString) and the public key set. */
export const keyParameterNames = (stage: string) => ({
  signingKeyring: `/${SERVICE}/${stage}/signing-keyring`,
  jwks: `/${SERVICE}/${stage}/jwks`,
});
