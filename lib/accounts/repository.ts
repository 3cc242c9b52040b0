/** The account store's port and the username rule (docs/behaviour.md, "Usernames"). */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { SessionTokenRevoker, UserStatusReader } from '../revocation/revocation.ts';
import type { Scope } from '../scopes.ts';
import { foldUsername, MAX_FOLDED_USERNAME_BYTES } from './username-key.ts';

export interface UserRecord {
  readonly username: string;
  readonly passwordHash: string;
  readonly enabled: boolean;
  /** The customer this login acts for (its auto-login context); null when none. */
  readonly customerId: string | null;
  /** The customer's first non-empty depot code, or null: kept on the user so login reads one item. */
  readonly depotCode: string | null;
  /** Epoch seconds: tokens with an earlier `iat`, and sessions started earlier, are revoked. */
  readonly revokedBefore: number;
  /** The scopes an operator narrowed the user to; null: every scope (the seed's contract). */
  readonly scopes: readonly Scope[] | null;
  /**
   * Whether the user administers its own customer's credentials: only when an operator granted
   * it, never by default, and never without a customer.
   */
  readonly admin: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface PickupAddress {
  readonly customerId: string;
  /** 1-based position in the customer's list, in the order the addresses were added. */
  readonly position: number;
  /** May be empty: not every pickup address has a depot assigned. */
  readonly depotCode: string;
  readonly createdAt: string;
}

export interface NewUser {
  readonly username: string;
  readonly passwordHash: string;
  readonly customerId: string | null;
}

export interface UserReader {
  /** The user whose stored username equals `username` exactly, or null. */
  findByUsername(username: string): Promise<UserRecord | null>;
}

/** What the self-service API checks of its caller on every call: an administration ends at once. */
export interface Administration {
  readonly enabled: boolean;
  readonly customerId: string | null;
  readonly admin: boolean;
  /** Epoch seconds: tokens issued earlier are revoked (logout everywhere, a new password, ...). */
  readonly revokedBefore: number;
  /** The sessions revoked one by one (a logout, a refresh token reused). */
  readonly revokedSessions: ReadonlySet<string>;
  /** The scopes an operator narrowed the user to; null: the defaults (UserRecord's). */
  readonly scopes: readonly Scope[] | null;
  /** Epoch ms until which an end of this administration is in progress (markEnding); 0: none. */
  readonly endingUntil: number;
}

export interface AdministrationReader {
  /** The user's administration as stored now (a strongly consistent read); null for no such user. */
  findAdministration(username: string): Promise<Administration | null>;
}

/** An end of an administration in progress: its id and until when (epoch ms) it holds. */
export interface AdministrationEnding {
  readonly id: string;
  readonly until: number;
}

/**
 * A customer's administrators, as its administrators see and change them. Ending one is three
 * steps, so that no interleaving of ends leaves the customer none (docs/administrators.md,
 * "The last administrator"): mark it as ending, find another administrator not being ended,
 * then end it on condition that the mark still holds.
 */
export interface Administrations extends AdministrationReader, Pick<AccountRepository, 'setAdministrator'> {
  /**
   * The usernames of the customer's administrators, in order. From an index: a grant made a
   * moment ago may be missing (eventually consistent).
   */
  listAdministrators(customerId: string): Promise<string[]>;
  /**
   * Marks the user's administration of `customerId` as being ended by `ending`, at `now` (epoch
   * ms). `marked`; `not-administrator` when the user is no administrator of that customer (or
   * none at all); `in-progress` when another end's mark still holds.
   */
  markEnding(
    username: string,
    customerId: string,
    ending: AdministrationEnding,
    now: number,
  ): Promise<'marked' | 'not-administrator' | 'in-progress'>;
  /** Ends the administration `ending` marked, while its mark holds at `now`; false when it no longer does. */
  endMarked(
    username: string,
    customerId: string,
    ending: AdministrationEnding,
    now: number,
  ): Promise<boolean>;
  /** Takes `ending`'s mark back, if it is still there. */
  unmark(username: string, ending: AdministrationEnding): Promise<void>;
}

export interface PasswordHashUpgrader {
  /**
   * Only if the hash is still `currentHash`: a password change in between wins. Revokes nothing.
   * The same write keeps `passwordHashDigest(currentHash)` unless the user has one already (the
   * first hash replaced since the password was set), until a new password (`setPasswordHash`)
   * drops it: an import of the replaced hash again finds the same password (ops/accounts/bulk.ts).
   */
  upgradePasswordHash(username: string, currentHash: string, upgradedHash: string): Promise<void>;
}

/**
 * What a user keeps of a hash a login's upgrade replaced: its SHA-256, base64url. Not the hash
 * itself, which at a lower cost than the stage's would be a cheaper target for the same password:
 * without the hash's salt the digest tests no guess, so the table holds one crackable hash per user.
 */
export const passwordHashDigest = (hash: string): string =>
  createHash('sha256').update(hash, 'utf8').digest('base64url');

/**
 * The admin CLI's; throws `AppError` NOT_FOUND or ALREADY_EXISTS. A new password or scopes, disabling,
 * the end of an administration and removal revoke the user's sessions and access tokens; enabling
 * and a grant revive none.
 */
export interface AccountRepository
  extends UserReader,
    UserStatusReader,
    PasswordHashUpgrader,
    SessionTokenRevoker {
  /** Also refuses a name that differs only by case; revokes tokens of an earlier user of that name. */
  createUser(user: NewUser): Promise<void>;
  setPasswordHash(username: string, passwordHash: string): Promise<void>;
  setEnabled(username: string, enabled: boolean): Promise<void>;
  revokeUserTokens(username: string): Promise<void>;
  setUserScopes(username: string, scopes: readonly Scope[] | null): Promise<void>;
  /**
   * Grants (true) or ends (false) the user's administration of its customer. A grant refuses a
   * user without a customer (VALIDATION_FAILED): there is nothing it could administer. Given
   * `customerId`, either changes the user only while it is that customer's (NOT_FOUND
   * otherwise, as for no such user), in the same write. Ending it also revokes the user's
   * tokens, so none issued while it administered outlives the grant.
   */
  setAdministrator(username: string, admin: boolean, customerId?: string): Promise<void>;
  removeUser(username: string): Promise<void>;
  addPickupAddress(customerId: string, depotCode: string): Promise<PickupAddress>;
  listPickupAddresses(customerId: string): Promise<PickupAddress[]>;
}

export const firstDepotCode = (addresses: readonly Pick<PickupAddress, 'depotCode'>[]): string | null =>
  addresses.find((address) => address.depotCode !== '')?.depotCode ?? null;

/** Every script of Unicode 17 but Common and Inherited (ISO 15924); Zzzz: unassigned and private use. */
export const USERNAME_SCRIPTS: readonly string[] = Object.freeze(
  (
    'Latn Cyrl Grek Arab Hebr Hani Hira Kana Hang Bopo Adlm Aghb Ahom Armi Armn Avst Bali Bamu ' +
    'Bass Batk Beng Berf Bhks Brah Brai Bugi Buhd Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt ' +
    'Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Gara Geor Glag Gong Gonm Goth Gran Gujr Gukh ' +
    'Guru Hano Hatr Hluw Hmng Hmnp Hung Ital Java Kali Kawi Khar Khmr Khoj Kits Knda Krai Kthi ' +
    'Lana Laoo Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero ' +
    'Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh ' +
    'Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb ' +
    'Saur Sgnw Shaw Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu Sylo Syrc Tagb Takr ' +
    'Tale Talu Taml Tang Tavt Tayo Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Tols Toto Tutg ' +
    'Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb Zzzz'
  ).split(' '),
);

/** UTS #39 §5.1 single-script (docs/behaviour.md, "Usernames"); built on first use, as login never needs it. */
let singleScriptNames: readonly RegExp[] | undefined;
const isSingleScript = (name: string) => {
  singleScriptNames ??= [
    ['Hani', 'Hira', 'Kana'],
    ['Hani', 'Hang'],
    ['Hani', 'Bopo'],
    ...USERNAME_SCRIPTS.map((script) => [script]),
  ].map((scripts) => {
    const letters = scripts.map((script) => `\\p{scx=${script}}`).join('');
    return new RegExp(`^[${letters}\\p{scx=Zyyy}\\p{scx=Zinh}]*$`, 'u');
  });
  return singleScriptNames.some((pattern) => pattern.test(name));
};

/** Names an operator may create; also checked in NFKC, where a look-alike (𝐚, Ⓐ, ：) is what it imitates. */
export const UsernameSchema = v.pipe(
  v.string(),
  v.nonEmpty('must not be empty'),
  v.maxLength(128, 'must be at most 128 characters'),
  v.regex(/^[^\p{Cc}\p{Cf}\p{Z}]+$/u, 'must not contain spaces or control characters'),
  v.check((name) => name === name.normalize('NFC'), 'must be in Unicode NFC form'),
  v.check(
    (name) => !name.normalize('NFKC').includes(':'),
    'must not contain a colon (the access log names API clients client:<id>)',
  ),
  v.check(
    (name) => isSingleScript(name) && isSingleScript(name.normalize('NFKC')),
    'must not mix scripts (e.g. Latin and Cyrillic letters)',
  ),
  v.check((name) => Buffer.byteLength(foldUsername(name)) <= MAX_FOLDED_USERNAME_BYTES, 'is too long'),
);

export const CustomerIdSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _'),
);

export const DepotCodeSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{0,32}$/, 'must be at most 32 letters, digits, - or _ (empty is allowed)'),
);
