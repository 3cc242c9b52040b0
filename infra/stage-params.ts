/**
 * Reads the stage parameters the operator tools need (`params.<stage>` over `params.default`, as
 * serverless.yml takes them from lib/settings.ts through infra/settings.cjs), so the admin CLI
 * hashes passwords at the stage's bcrypt cost, imports hashes up to the cost the stage's login can
 * afford, keeps retired keys as long as the stage's tokens live, keeps audit events as long as the
 * stage's functions do and encrypts the keyring with the KMS key the stage's template puts it
 * under, without a second copy of a value. (A `--param` given to `serverless deploy` is not seen
 * here: set a stage's values in lib/settings.ts.)
 *
 * A parameter may be a literal or use `${env:NAME}` / `${env:NAME, 'default'}`, resolved as
 * the Serverless Framework does (the variable when set, even to '', else the default). Any other
 * variable cannot be resolved here: that is an error naming the parameter.
 */

import * as v from 'valibot';
import * as schemas from '../lib/config/schemas.ts';
import type { Env } from '../lib/config.ts';
import { SETTINGS } from '../lib/settings.ts';
import { SERVICE } from '../lib/stage.ts';
import type { ThrottlePolicy } from '../lib/throttle/throttle.ts';
import { SERVERLESS_SETTINGS } from './function-env.ts';

/**
 * A KMS key ARN (not an alias: IAM grants kms:Decrypt on the key's ARN), in any partition,
 * or empty for the AWS-managed key.
 */
export const KmsKeyArnSchema = v.union([
  v.literal(''),
  v.pipe(
    v.string(),
    v.regex(
      /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/,
      'must be a KMS key ARN (not an alias)',
    ),
  ),
]);

/**
 * The parameters read here that a function reads too, by their variable: checked with that
 * variable's schema (lib/config/schemas.ts), so no bound is stated twice and a stage its
 * functions would refuse is refused here as well.
 */
const FunctionParamsSchema = v.object({
  TOKEN_ISSUER: schemas.TOKEN_ISSUER(),
  BCRYPT_COST: schemas.BCRYPT_COST(),
  ACCESS_TOKEN_TTL: schemas.ACCESS_TOKEN_TTL(),
  REFRESH_TOKEN_TTL: schemas.REFRESH_TOKEN_TTL(),
  KEY_RELOAD_INTERVAL: schemas.KEY_RELOAD_INTERVAL(),
  LOGIN_FAILURE_LIMIT: schemas.LOGIN_FAILURE_LIMIT(),
  LOGIN_FAILURE_WINDOW: schemas.LOGIN_FAILURE_WINDOW(),
  LOGIN_LOCKOUT_BASE: schemas.LOGIN_LOCKOUT_BASE(),
  LOGIN_LOCKOUT_MAX: schemas.LOGIN_LOCKOUT_MAX(),
  LOGIN_INFLIGHT_LIMIT: schemas.LOGIN_INFLIGHT_LIMIT(),
  KNOWN_SOURCE_PERIOD: schemas.KNOWN_SOURCE_PERIOD(),
  AUDIT_RETENTION: schemas.AUDIT_RETENTION(),
});

const { importBcryptMaxCost, loginMemorySize } = SETTINGS;
const numberWithin = (bounds: { readonly min?: number; readonly max?: number }) =>
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(bounds.min ?? Number.NEGATIVE_INFINITY),
    v.maxValue(bounds.max ?? Number.POSITIVE_INFINITY),
  );

/** The parameters no function reads; their bounds are lib/settings.ts's. */
const OperatorParamsSchema = v.object({
  // At least bcryptCost (checked below): a stage's export imports back.
  importBcryptMaxCost: v.pipe(
    v.union([v.number(), v.string()]),
    v.transform(String),
    schemas.wholeNumber('must be a whole number', importBcryptMaxCost.bounds),
  ),
  loginMemorySize: numberWithin(loginMemorySize.bounds),
  kmsKeyArn: KmsKeyArnSchema,
  createKeyringKey: v.picklist(['true', 'false'], "must be 'true' or 'false'"),
  customDomainName: v.union(
    [v.literal(''), v.pipe(v.string(), v.regex(/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+[a-z]{2,63}$/))],
    'must be empty or a lower-case domain name',
  ),
  customDomainCertificateArn: v.union(
    [
      v.literal(''),
      v.pipe(v.string(), v.regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/)),
    ],
    'must be empty or an ACM certificate ARN',
  ),
});

/** Each function variable's parameter, as lib/settings.ts names it. */
const PARAM_OF: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SETTINGS).flatMap(([name, setting]) =>
    'variable' in setting ? [[setting.variable, name]] : [],
  ),
);

export interface StageParams {
  readonly bcryptCost: number;
  /** The highest bcrypt cost an imported hash may have: docs/import-format.md. */
  readonly importBcryptMaxCost: number;
  /** The login functions' memory (MB), which sets their CPU share and so a compare's time. */
  readonly loginMemorySize: number;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly keyReloadIntervalSeconds: number;
  /**
   * The KMS key the signing keyring is written with (`keyringKmsKey`): a key ARN, or the
   * stack's own key by its alias; undefined: the AWS-managed key.
   */
  readonly kmsKeyArn: string | undefined;
  /** The username counters' rule, so operators see a refusing counter as locked. */
  readonly usernameThrottle: ThrottlePolicy;
  /** How long a source stays known for a name (0: known sources off). */
  readonly knownSourceSeconds: number;
  /** How long the audit trail keeps the events the admin CLI writes, as the functions keep theirs. */
  readonly auditRetentionSeconds: number;
}

/**
 * The key infra/kms.yml puts the keyring under: the stage parameter kmsKeyArn when set, else
 * the stack's own key when the stage creates one (createKeyringKey), by its alias, which SSM's
 * PutParameter takes as KeyId; else undefined, the AWS-managed key aws/ssm.
 */
export function keyringKmsKey(
  stage: string,
  params: { readonly kmsKeyArn: string; readonly createKeyringKey: 'true' | 'false' },
): string | undefined {
  if (params.kmsKeyArn !== '') return params.kmsKeyArn;
  return params.createKeyringKey === 'true' ? `alias/${SERVICE}-${stage}-keyring` : undefined;
}

const ENV_VARIABLE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?:\s*,\s*(?:'([^']*)'|"([^"]*)"))?\s*\}/g;

/** A parameter's value with its `${env:…}` variables resolved. */
function resolveValue(name: string, value: unknown, stage: string, env: Env): unknown {
  if (typeof value !== 'string') return value;
  const resolved = value
    .replaceAll(/\$\{sls:stage\}/g, stage)
    .replaceAll(/\$\{self:service\}/g, SERVICE)
    .replace(ENV_VARIABLE, (variable, envName: string, single?: string, double?: string) => {
      const fallback = single ?? double;
      const set = env[envName];
      if (set !== undefined) return set;
      if (fallback !== undefined) return fallback;
      throw new Error(
        `param ${name} of stage ${stage} needs the environment variable ${envName} (${variable})`,
      );
    });
  if (resolved.includes('${')) {
    throw new Error(`param ${name} of stage ${stage} uses a variable this tool cannot resolve`);
  }
  return resolved;
}

type ParamBlocks = Readonly<Record<string, Readonly<Record<string, unknown>> | null | undefined>>;

/** serverless.yml's `params:` blocks, from lib/settings.ts (infra/settings.cjs). */
export const serverlessParams = (): ParamBlocks => SERVERLESS_SETTINGS.params;

/**
 * The parameters of `stage`; `env` resolves `${env:…}` variables (default: this process's);
 * `blocks`: the `params:` blocks (default: serverless.yml's).
 */
export function readStageParams(
  stage: string,
  env: Env = process.env,
  blocks: ParamBlocks = serverlessParams(),
): StageParams {
  const merged: Record<string, unknown> = { ...blocks.default, ...blocks[stage] };
  const value = (name: string) => resolveValue(name, merged[name], stage, env);
  const param = (variable: string) => PARAM_OF[variable] ?? variable;
  // What a function finds in its environment: the parameter's value as text.
  const variables = Object.fromEntries(
    Object.keys(FunctionParamsSchema.entries).map((variable) => {
      const found = value(param(variable));
      return [variable, found === undefined ? undefined : String(found)];
    }),
  );
  const operator = Object.fromEntries(
    Object.keys(OperatorParamsSchema.entries).map((name) => [name, value(name)]),
  );
  const read = v.safeParse(FunctionParamsSchema, variables);
  const own = v.safeParse(OperatorParamsSchema, operator);
  if (!read.success || !own.success) {
    const problems = [
      ...(read.issues ?? []).map((issue) => {
        const variable = v.getDotPath(issue) ?? '';
        return `${param(variable)} (${variable}) ${issue.message}`;
      }),
      ...(own.issues ?? []).map((issue) => `${v.getDotPath(issue) ?? '(params)'} ${issue.message}`),
    ];
    throw new Error(`serverless.yml params of stage ${stage}: ${problems.join('; ')}`);
  }
  const fn = read.output;
  const params = own.output;
  if (params.importBcryptMaxCost < fn.BCRYPT_COST) {
    throw new Error(
      `serverless.yml params of stage ${stage}: importBcryptMaxCost must be at least bcryptCost ` +
        `(${fn.BCRYPT_COST}): the stage's own hashes must import back`,
    );
  }
  if ((params.customDomainName === '') !== (params.customDomainCertificateArn === '')) {
    throw new Error(
      `serverless.yml params of stage ${stage}: customDomainName and customDomainCertificateArn go together`,
    );
  }
  // RFC 8414 section 3: discovery by issuer finds the metadata only on the issuer's own origin.
  if (params.customDomainName !== '' && fn.TOKEN_ISSUER !== `https://${params.customDomainName}`) {
    throw new Error(
      `serverless.yml params of stage ${stage}: with customDomainName, tokenIssuer must be ` +
        `https://${params.customDomainName} (docs/stages.md, "Issuer and discovery")`,
    );
  }
  return {
    bcryptCost: fn.BCRYPT_COST,
    importBcryptMaxCost: params.importBcryptMaxCost,
    loginMemorySize: params.loginMemorySize,
    accessTokenTtlSeconds: fn.ACCESS_TOKEN_TTL,
    refreshTokenTtlSeconds: fn.REFRESH_TOKEN_TTL,
    keyReloadIntervalSeconds: fn.KEY_RELOAD_INTERVAL,
    kmsKeyArn: keyringKmsKey(stage, params),
    usernameThrottle: {
      limit: fn.LOGIN_FAILURE_LIMIT,
      windowSeconds: fn.LOGIN_FAILURE_WINDOW,
      baseLockSeconds: fn.LOGIN_LOCKOUT_BASE,
      maxLockSeconds: fn.LOGIN_LOCKOUT_MAX,
      inflightLimit: Math.max(fn.LOGIN_INFLIGHT_LIMIT, fn.LOGIN_FAILURE_LIMIT),
    },
    knownSourceSeconds: fn.KNOWN_SOURCE_PERIOD,
    auditRetentionSeconds: fn.AUDIT_RETENTION,
  };
}
