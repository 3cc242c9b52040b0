/**
 * Stage settings, read from the environment once per container and validated with valibot.
 * A missing or malformed value fails the container at init with a message naming the
 * variable, never a request later. Each function reads only the section it needs, so the
 * authorizer does not depend on table names and the login functions do not depend on
 * the verification key set.
 */
import * as v from 'valibot';

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** A duration such as `90s`, `15m`, `24h` or `30d`, as whole seconds. */
export const DurationSchema = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,6}[smhd]$/, 'must be a positive duration such as 30s, 15m, 24h or 30d'),
  v.transform((text) => Number.parseInt(text.slice(0, -1), 10) * UNITS[text.slice(-1) as keyof typeof UNITS]),
);

/** Where key material lives: a file (local stage) or an SSM parameter (AWS stages). */
export type KeySource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'ssm'; readonly name: string };

const KeySourceSchema = v.pipe(
  v.string(),
  v.regex(/^(file:\/.+|ssm:\/.+)$/, 'must be file:/absolute/path or ssm:/parameter/name'),
  v.transform((text): KeySource => {
    const [scheme, ...rest] = text.split(':');
    const value = rest.join(':');
    return scheme === 'file' ? { kind: 'file', path: value } : { kind: 'ssm', name: value };
  }),
);

const NonEmpty = v.pipe(v.string(), v.trim(), v.nonEmpty('must not be empty'));
const OptionalUrl = v.optional(
  v.union([v.literal(''), v.pipe(v.string(), v.url('must be a URL'))], 'must be empty or a URL'),
  '',
);

const TokenEnv = {
  STAGE: NonEmpty,
  TOKEN_ISSUER: v.pipe(NonEmpty, v.url('must be a URL')),
  TOKEN_AUDIENCE: NonEmpty,
  ACCESS_TOKEN_TTL: DurationSchema,
};

const DataEnv = {
  AWS_REGION: v.optional(NonEmpty, 'eu-central-1'),
  DYNAMODB_ENDPOINT: OptionalUrl,
};

const LoginEnvSchema = v.object({
  ...TokenEnv,
  ...DataEnv,
  REFRESH_TOKEN_TTL: DurationSchema,
  ACCOUNTS_TABLE: NonEmpty,
  SIGNING_KEY: KeySourceSchema,
  BCRYPT_COST: v.pipe(
    v.string(),
    v.regex(/^\d{1,2}$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(4, 'must be at least 4'),
    v.maxValue(15, 'must be at most 15'),
  ),
});

const AuthorizerEnvSchema = v.object({
  ...TokenEnv,
  AWS_REGION: DataEnv.AWS_REGION,
  VERIFICATION_KEYS: KeySourceSchema,
});

const ShipmentsEnvSchema = v.object({
  ...DataEnv,
  SHIPMENTS_TABLE: NonEmpty,
});

export type Env = Readonly<Record<string, string | undefined>>;

export interface TokenSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly accessTtlSeconds: number;
}

export interface DataSettings {
  readonly region: string;
  /** Set on the local stage only; empty means the regional AWS endpoint. */
  readonly dynamodbEndpoint: string | undefined;
}

export interface LoginConfig {
  readonly stage: string;
  readonly tokens: TokenSettings & { readonly refreshTtlSeconds: number };
  readonly data: DataSettings;
  readonly accountsTable: string;
  readonly signingKey: KeySource;
  readonly bcryptCost: number;
}

export interface AuthorizerConfig {
  readonly stage: string;
  readonly region: string;
  readonly tokens: TokenSettings;
  readonly verificationKeys: KeySource;
}

export interface ShipmentsConfig {
  readonly data: DataSettings;
  readonly shipmentsTable: string;
}

function parse<TSchema extends v.GenericSchema>(schema: TSchema, env: Env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? '(environment)'} ${issue.message}`);
  throw new Error(`Invalid configuration: ${problems.join('; ')}`);
}

const tokenSettings = (env: v.InferOutput<v.ObjectSchema<typeof TokenEnv, undefined>>): TokenSettings => ({
  issuer: env.TOKEN_ISSUER,
  audience: env.TOKEN_AUDIENCE,
  accessTtlSeconds: env.ACCESS_TOKEN_TTL,
});

const dataSettings = (env: { AWS_REGION: string; DYNAMODB_ENDPOINT: string }): DataSettings => ({
  region: env.AWS_REGION,
  dynamodbEndpoint: env.DYNAMODB_ENDPOINT === '' ? undefined : env.DYNAMODB_ENDPOINT,
});

export function readLoginConfig(env: Env = process.env): LoginConfig {
  const parsed = parse(LoginEnvSchema, env);
  return Object.freeze({
    stage: parsed.STAGE,
    tokens: Object.freeze({ ...tokenSettings(parsed), refreshTtlSeconds: parsed.REFRESH_TOKEN_TTL }),
    data: Object.freeze(dataSettings(parsed)),
    accountsTable: parsed.ACCOUNTS_TABLE,
    signingKey: parsed.SIGNING_KEY,
    bcryptCost: parsed.BCRYPT_COST,
  });
}

export function readAuthorizerConfig(env: Env = process.env): AuthorizerConfig {
  const parsed = parse(AuthorizerEnvSchema, env);
  return Object.freeze({
    stage: parsed.STAGE,
    region: parsed.AWS_REGION,
    tokens: Object.freeze(tokenSettings(parsed)),
    verificationKeys: parsed.VERIFICATION_KEYS,
  });
}

export function readShipmentsConfig(env: Env = process.env): ShipmentsConfig {
  const parsed = parse(ShipmentsEnvSchema, env);
  return Object.freeze({ data: Object.freeze(dataSettings(parsed)), shipmentsTable: parsed.SHIPMENTS_TABLE });
}
