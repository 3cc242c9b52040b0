/**
 * Bulk import and export of customers (with their ordered pickup addresses), users (with
 * their password hashes) and API clients (with their secrets' digests), as JSON Lines: one
 * record per line, the format of docs/import-format.md.
 *
 * An import runs in up to four passes over the file, so memory stays flat however long it is:
 * 1. validate every record with the rules of the single-user commands, and the file as a
 *    whole (a username twice in any letter case, a user of an unknown customer, a client
 *    twice); nothing is written if a record is invalid (unless the caller skips invalid records);
 * 2. customers: compare with the table, write what is missing;
 * 3. users: compare with the table, write what is missing;
 * 4. clients, when the file holds any: compare with the table, write what is missing.
 * Each pass reads the table before it writes, so running a file again writes nothing, and an
 * import interrupted anywhere continues where it stopped: a customer's addresses are written
 * before its counter, a user's item before its membership, and a half-written customer or a
 * user without its membership is completed on the next run.
 */
import * as v from 'valibot';
import {
  CustomerIdSchema,
  DepotCodeSchema,
  firstDepotCode,
  passwordHashDigest,
  UsernameSchema,
} from '../../lib/accounts/repository.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import { BCRYPT_HASH, bcryptCostOf, newPasswordProblem } from '../../lib/auth/passwords.ts';
import {
  ClientIdSchema,
  ClientNameSchema,
  type ClientRecord,
  SecretIdSchema,
} from '../../lib/clients/clients.ts';
import { ClientJwkSchema } from '../../lib/clients/keys.ts';
import { liveSecrets, MAX_LIVE_SECRETS } from '../../lib/clients/secrets.ts';
import { redirectUrisSchema } from '../../lib/platforms/redirect-uris.ts';
import { GRANTABLE_SCOPES, isGrantableScope, type Scope, sortScopes } from '../../lib/scopes.ts';

const IsoTime = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 time'));

export const CustomerImportSchema = v.strictObject({
  type: v.literal('customer'),
  customerId: CustomerIdSchema,
  /** In order: the first non-empty depot code is the one login-extended returns. */
  pickupAddresses: v.pipe(
    v.array(v.strictObject({ depotCode: DepotCodeSchema, createdAt: v.optional(IsoTime) })),
    v.maxLength(1000, 'must hold at most 1000 addresses'),
  ),
});

export const UserImportSchema = v.pipe(
  v.strictObject({
    type: v.literal('user'),
    username: UsernameSchema,
    customerId: v.optional(v.nullable(CustomerIdSchema), null),
    enabled: v.optional(v.boolean(), true),
    /** An existing bcrypt hash, kept as it is ($2y$ included): the user logs in with the old password. */
    passwordHash: v.optional(
      v.pipe(v.string(), v.regex(BCRYPT_HASH, 'must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31)')),
    ),
    /** A password in plain text, hashed at the stage's cost and held to the password policy. */
    password: v.optional(v.string()),
    createdAt: v.optional(IsoTime),
  }),
  v.check(
    (user) => (user.passwordHash === undefined) !== (user.password === undefined),
    'needs exactly one of passwordHash and password',
  ),
);

/** A SHA-256 digest as lib/clients stores it: 32 bytes, base64url without padding. */
const SecretDigestSchema = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, 'must be a SHA-256 digest'));

/**
 * An API client as a backup carries it: its secrets' digests, never the secrets (nobody has
 * them but the integrator), so the imported client authenticates with the secrets it had; a
 * client of keys, its public keys (kid and JWK). A
 * platform (docs/platforms.md) has its redirect URIs and a name instead of a customer.
 */
export const ClientImportSchema = v.pipe(
  v.strictObject({
    type: v.literal('client'),
    clientId: ClientIdSchema,
    customerId: v.optional(CustomerIdSchema),
    redirectUris: v.optional(redirectUrisSchema({ allowLoopback: true })),
    name: v.optional(ClientNameSchema),
    scopes: v.pipe(
      v.array(v.string()),
      v.minLength(1, 'must name at least one scope'),
      v.check(
        (names) => names.every(isGrantableScope),
        `must name only the scopes ${GRANTABLE_SCOPES.join(', ')}`,
      ),
      v.check((names) => new Set(names).size === names.length, 'must not name a scope twice'),
      v.transform((names) => sortScopes(names as Scope[])),
    ),
    enabled: v.optional(v.boolean(), true),
    // A client of keys (private_key_jwt) carries its public keys in their slots instead.
    secrets: v.pipe(
      v.array(
        v.pipe(
          v.strictObject({
            id: SecretIdSchema,
            digest: v.optional(SecretDigestSchema),
            kid: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
            jwk: v.optional(ClientJwkSchema),
            createdAt: IsoTime,
            expiresAt: v.optional(IsoTime),
          }),
          v.check(
            (slot) =>
              slot.digest === undefined
                ? slot.kid !== undefined && slot.jwk !== undefined
                : slot.kid === undefined && slot.jwk === undefined,
            "needs a digest (a secret's), or a kid and a jwk (a key's)",
          ),
          v.transform(({ digest, kid, jwk, ...slot }) =>
            kid !== undefined && jwk !== undefined
              ? { ...slot, digest: '', key: { kid, jwk } }
              : { ...slot, digest: digest ?? '' },
          ),
        ),
      ),
      v.minLength(1, 'must hold at least one secret'),
      v.maxLength(MAX_LIVE_SECRETS, `must hold at most ${MAX_LIVE_SECRETS} secrets`),
      v.check(
        (secrets) => new Set(secrets.map((secret) => secret.id)).size === secrets.length,
        'must not hold a secret id twice',
      ),
      v.check(
        (secrets) => new Set(secrets.map((secret) => 'key' in secret)).size === 1,
        'must hold secrets or keys, not both',
      ),
    ),
    createdAt: v.optional(IsoTime),
  }),
  v.check(
    (client) => (client.customerId === undefined) !== (client.redirectUris === undefined),
    'needs exactly one of customerId (an API client) and redirectUris (a platform)',
  ),
  v.check(
    (client) => client.redirectUris === undefined || client.name !== undefined,
    'a platform (with redirectUris) needs a name',
  ),
);

export type CustomerImportRecord = v.InferOutput<typeof CustomerImportSchema>;
export type UserImportRecord = v.InferOutput<typeof UserImportSchema>;
export type ClientImportRecord = v.InferOutput<typeof ClientImportSchema>;
export type ImportRecord = CustomerImportRecord | UserImportRecord | ClientImportRecord;

/** What is wrong with a record; never carries a password or a hash. */
export interface Problem {
  /**
   * The field the message is about, as a path of the file's own key names (array positions
   * as digits): text from the file, so a caller quotes it before showing it. Absent when the
   * message names what it is about.
   */
  readonly field?: readonly string[];
  readonly message: string;
}

/** One problem of one line. */
export interface LineProblem extends Problem {
  readonly line: number;
}

/** What the rules of a record depend on: the stage's settings. */
export interface RecordRules {
  /**
   * The stage's `importBcryptMaxCost`, the highest cost an imported hash may have: what a
   * login's compare affords well inside its timeout. Any other cost than the stage's is
   * re-hashed at the first login; until then the user's logins take that cost's time.
   */
  readonly importBcryptMaxCost: number;
}

/** A line parsed and checked on its own, or why not. */
export function parseRecord(
  text: string,
  rules: RecordRules,
): { record: ImportRecord } | { problem: Problem } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: { message: 'is not valid JSON' } };
  }
  const type = (json as { type?: unknown } | null)?.type;
  const schema =
    type === 'customer'
      ? CustomerImportSchema
      : type === 'user'
        ? UserImportSchema
        : type === 'client'
          ? ClientImportSchema
          : undefined;
  if (schema === undefined) return { problem: { message: 'type must be "customer", "user" or "client"' } };
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const issue = result.issues[0];
    const field = issue?.path?.map((item) => String(item.key));
    // valibot's own messages quote the value received; ours name the rule only.
    const message =
      issue?.type === 'strict_object'
        ? issue.received === 'undefined'
          ? 'is required'
          : 'is not a field of the record'
        : issue?.message.startsWith('Invalid ')
          ? `must be ${issue.expected ?? 'valid'}`
          : issue?.message;
    const text = message ?? 'is not valid';
    return { problem: field === undefined ? { message: `record ${text}` } : { field, message: text } };
  }
  const record = result.output;
  if (record.type === 'user' && record.password !== undefined) {
    const problem = newPasswordProblem(record.password, record.username);
    if (problem !== undefined) return { problem: { message: `password: ${problem}` } };
  }
  if (record.type === 'user' && record.passwordHash !== undefined) {
    const cost = bcryptCostOf(record.passwordHash);
    if (cost > rules.importBcryptMaxCost) {
      return {
        problem: {
          field: ['passwordHash'],
          message: `has cost ${cost}, above the stage's importBcryptMaxCost (${rules.importBcryptMaxCost}), the most an import accepts`,
        },
      };
    }
  }
  return { record };
}

/** What the file-wide checks need to know of the table. */
export interface KnownCustomers {
  /** True when the table holds the customer (its counter, an address or a member). */
  exists(customerId: string): Promise<boolean>;
}

export interface ValidationReport {
  readonly customers: number;
  readonly users: number;
  readonly clients: number;
  readonly problems: LineProblem[];
  /** Lines whose record is invalid, to leave out when invalid records are skipped. */
  readonly invalidLines: ReadonlySet<number>;
}

/**
 * Pass 1: every line on its own, then the file as a whole: a username that appears twice
 * in any letter case (every occurrence reported: neither may overwrite the other), a
 * customer or a client twice, a user whose customer is neither in the file nor in the table.
 * A client's customer is not looked for: `client add` does not ask for one either, and a
 * customer with no address and no user is in no export.
 */
export async function validateFile(
  lines: () => AsyncIterable<string>,
  known: KnownCustomers,
  rules: RecordRules,
): Promise<ValidationReport> {
  const problems: LineProblem[] = [];
  const invalidLines = new Set<number>();
  // Per folded username its first line: a few dozen bytes per user, not the records.
  const usernames = new Map<string, number>();
  const customersInFile = new Map<string, number>();
  const clientsInFile = new Map<string, number>();
  const customerOfUser: { line: number; customerId: string }[] = [];
  let customers = 0;
  let users = 0;
  let clients = 0;
  let line = 0;
  const refuse = (at: number, problem: Problem | string) => {
    problems.push({ line: at, ...(typeof problem === 'string' ? { message: problem } : problem) });
    invalidLines.add(at);
  };
  for await (const text of lines()) {
    line += 1;
    if (text.trim() === '') continue;
    const parsed = parseRecord(text, rules);
    if ('problem' in parsed) {
      refuse(line, parsed.problem);
      continue;
    }
    const { record } = parsed;
    if (record.type === 'customer') {
      customers += 1;
      const first = customersInFile.get(record.customerId);
      if (first !== undefined) refuse(line, `customer ${record.customerId} is also on line ${first}`);
      else customersInFile.set(record.customerId, line);
      continue;
    }
    if (record.type === 'client') {
      clients += 1;
      const first = clientsInFile.get(record.clientId);
      if (first !== undefined) refuse(line, `client ${record.clientId} is also on line ${first}`);
      else clientsInFile.set(record.clientId, line);
      continue;
    }
    users += 1;
    const folded = foldUsername(record.username);
    const first = usernames.get(folded);
    if (first !== undefined) {
      refuse(line, `username differs from the one on line ${first} only by letter case or is the same`);
      if (!invalidLines.has(first)) refuse(first, `username is also on line ${line} (in any letter case)`);
    } else {
      usernames.set(folded, line);
    }
    if (record.customerId !== null && !customersInFile.has(record.customerId)) {
      customerOfUser.push({ line, customerId: record.customerId });
    }
  }
  // Customers may come after their users in the file; the table is asked once per customer.
  const exists = new Map<string, Promise<boolean>>();
  for (const { line: at, customerId } of customerOfUser) {
    if (customersInFile.has(customerId)) continue;
    let known_ = exists.get(customerId);
    if (known_ === undefined) {
      known_ = known.exists(customerId);
      exists.set(customerId, known_);
    }
    if (!(await known_)) refuse(at, `customer ${customerId} is neither in the file nor in the table`);
  }
  problems.sort((a, b) => a.line - b.line);
  return { customers, users, clients, problems, invalidLines };
}

/** A customer as the table holds it. */
export interface ExistingCustomer {
  /** The pickup addresses in order (positions 1, 2, ...). */
  readonly addresses: readonly { readonly depotCode: string; readonly createdAt: string }[];
  /** The address counter; undefined when it was not written yet. */
  readonly addressCount: number | undefined;
}

/** A user as the table holds it, under the user's folded name. */
export interface ExistingUser {
  readonly username: string;
  readonly passwordHash: string;
  /**
   * `passwordHashDigest` of the hash a login's upgrade replaced, the same password at another
   * cost; null when no login upgraded it since the password was set.
   */
  readonly upgradedFromHash: string | null;
  /** A password was set here (`user passwd`) since the user was made: `passwordSetAt` on its item. */
  readonly passwordSet: boolean;
  readonly enabled: boolean;
  readonly customerId: string | null;
  readonly hasMembership: boolean;
}

/** What the customer pass decided for one record. */
export type CustomerPlan =
  | { readonly outcome: 'unchanged' }
  | { readonly outcome: 'created' | 'updated'; readonly fromPosition: number }
  | { readonly outcome: 'failed'; readonly reason: string };

/**
 * A customer record against the table: new, the same, completed (the table's addresses are
 * the first of the record's, e.g. an interrupted import), or different (never overwritten).
 */
export function planCustomer(record: CustomerImportRecord, stored: ExistingCustomer | null): CustomerPlan {
  const wanted = record.pickupAddresses.map((address) => address.depotCode);
  const depotCodes = stored?.addresses.map((address) => address.depotCode) ?? [];
  if (stored === null || (depotCodes.length === 0 && stored.addressCount === undefined)) {
    return wanted.length === 0 ? { outcome: 'unchanged' } : { outcome: 'created', fromPosition: 1 };
  }
  const isPrefix = depotCodes.every((code, index) => wanted[index] === code);
  if (!isPrefix || depotCodes.length > wanted.length) {
    return {
      outcome: 'failed',
      reason: `customer ${record.customerId} exists with other pickup addresses (left as it is)`,
    };
  }
  if (depotCodes.length === wanted.length && stored.addressCount === wanted.length) {
    return { outcome: 'unchanged' };
  }
  return { outcome: 'updated', fromPosition: depotCodes.length + 1 };
}

/** What the user pass decided for one record. */
export type UserPlan =
  | { readonly outcome: 'unchanged' }
  | { readonly outcome: 'created' }
  /** The user item is there, its membership was not: an interrupted import. */
  | { readonly outcome: 'updated' }
  /**
   * The same user with a password set here since (`user passwd`): left as it is, and no failure of the run.
   * `completesMembership`: its membership is missing (an interrupted write) and is written.
   */
  | { readonly outcome: 'kept'; readonly reason: string; readonly completesMembership: boolean }
  | { readonly outcome: 'failed'; readonly reason: string };

/**
 * A user record against the table. An existing user is never overwritten: the same name in
 * another letter case is a conflict, and so is the same user with another `enabled` or
 * customer. Another password is kept and is no conflict: a password set here since the first
 * import (`user passwd`) is newer than the file's. The password is the same when the record's
 * hash is the stored one or the one a login's upgrade replaced (the same password re-hashed at
 * the stage's cost); `samePassword` decides for a record with a plain password (a bcrypt
 * compare against the stored hash).
 */
export async function planUser(
  record: UserImportRecord,
  stored: ExistingUser | null,
  samePassword: (password: string, hash: string) => Promise<boolean>,
): Promise<UserPlan> {
  if (stored === null) return { outcome: 'created' };
  if (stored.username !== record.username) {
    return { outcome: 'failed', reason: `username exists in another letter case (${stored.username})` };
  }
  if (stored.enabled !== record.enabled || stored.customerId !== record.customerId) {
    return { outcome: 'failed', reason: 'user exists with other data (left as it is)' };
  }
  const completesMembership = record.customerId !== null && !stored.hasMembership;
  const samePasswordAsStored =
    record.passwordHash !== undefined
      ? record.passwordHash === stored.passwordHash ||
        passwordHashDigest(record.passwordHash) === stored.upgradedFromHash
      : await samePassword(record.password ?? '', stored.passwordHash);
  // Another password set here since (user passwd) is the user's own; any other difference is
  // a wrong file or stage, and fails the run.
  if (!samePasswordAsStored && !stored.passwordSet)
    return { outcome: 'failed', reason: 'user exists with another password (left as it is)' };
  if (!samePasswordAsStored) {
    return {
      outcome: 'kept',
      reason: 'user exists with a password set since (left as it is)',
      completesMembership,
    };
  }
  return completesMembership ? { outcome: 'updated' } : { outcome: 'unchanged' };
}

/** What the client pass decided for one record. */
export type ClientPlan =
  | { readonly outcome: 'created' | 'unchanged' }
  | { readonly outcome: 'failed'; readonly reason: string };

/** The same live secrets at `now`: an expired one works nowhere, and an export leaves it out. */
const sameSecrets = (record: ClientImportRecord, stored: ClientRecord, now: Date) => {
  const live = liveSecrets(stored.secrets, now);
  const byId = new Map(live.map((secret) => [secret.id, secret]));
  const recorded = liveSecrets(record.secrets, now);
  return (
    recorded.length === live.length &&
    recorded.every((secret) => {
      const found = byId.get(secret.id);
      const recordedKey = 'key' in secret ? secret.key : undefined;
      return (
        found?.digest === secret.digest &&
        found.expiresAt === secret.expiresAt &&
        JSON.stringify(found.key) === JSON.stringify(recordedKey)
      );
    })
  );
};

/**
 * A client record against the table, by the rule of a user: an existing client is never
 * overwritten. The same customer, name, scopes, `enabled` and secrets (ids, digests and ends)
 * is unchanged; anything else is a conflict (a secret rotated or a client disabled here since
 * the export).
 */
export function planClient(record: ClientImportRecord, stored: ClientRecord | null, now: Date): ClientPlan {
  if (stored === null) return { outcome: 'created' };
  const same =
    stored.customerId === record.customerId &&
    (stored.platform?.redirectUris.join(' ') ?? undefined) === record.redirectUris?.join(' ') &&
    stored.name === record.name &&
    stored.enabled === record.enabled &&
    sortScopes(stored.scopes).join(' ') === record.scopes.join(' ') &&
    sameSecrets(record, stored, now);
  return same
    ? { outcome: 'unchanged' }
    : { outcome: 'failed', reason: 'client exists with other data (left as it is)' };
}

/** The derived depot code a user of a customer gets, from the customer's addresses. */
export const depotOf = (depotCodes: readonly string[]) => ({
  depotCode: firstDepotCode(depotCodes.map((depotCode) => ({ depotCode }))),
  addressesSeen: depotCodes.length,
});

/**
 * What became of a record. `kept` (a user with a password set here since, left as it is) is reported by
 * line, as `failed` is, but fails nothing: the table holds a newer password than the file.
 */
export type Outcome = 'created' | 'unchanged' | 'updated' | 'skipped' | 'failed' | 'kept';

export type ImportSummary = Record<Outcome, number>;

export const emptySummary = (): ImportSummary => ({
  created: 0,
  unchanged: 0,
  updated: 0,
  skipped: 0,
  failed: 0,
  kept: 0,
});
