/** A stage's resource names as serverless.yml creates them; a template test checks them. */
export const SERVICE = 'parcel-auth';

export const tableNames = (stage: string) => ({
  accounts: `${SERVICE}-${stage}-accounts`,
  shipments: `${SERVICE}-${stage}-shipments`,
  sessions: `${SERVICE}-${stage}-sessions`,
  loginThrottle: `${SERVICE}-${stage}-login-throttle`,
  audit: `${SERVICE}-${stage}-audit`,
});

export type TableKey = keyof ReturnType<typeof tableNames>;

/** SSM parameters of an AWS stage's keys: the private keyring (SecureString) and the public key set. */
export const keyParameterNames = (stage: string) => ({
  signingKeyring: `/${SERVICE}/${stage}/signing-keyring`,
  jwks: `/${SERVICE}/${stage}/jwks`,
});
