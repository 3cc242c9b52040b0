/**
 * Names of a stage's resources, as serverless.yml creates them. The admin CLI and the local
 * stack use these; a template test checks them against the packaged CloudFormation.
 */
export const SERVICE = 'parcel-auth';

export const tableNames = (stage: string) => ({
  accounts: `${SERVICE}-${stage}-accounts`,
  shipments: `${SERVICE}-${stage}-shipments`,
});

export type TableKey = keyof ReturnType<typeof tableNames>;

/** SSM parameters of an AWS stage's keys: the private signing key (SecureString) and the public set. */
export const keyParameterNames = (stage: string) => ({
  signingKey: `/${SERVICE}/${stage}/signing-key`,
  jwks: `/${SERVICE}/${stage}/jwks`,
});
