import { ALL_SCOPES } from '../../lib/scopes.ts';

export const USAGE = `Usage: npm run admin -- <command> [options]

Operator commands of parcel-auth. Without --stage they act on the local stack (npm start):
DynamoDB at 127.0.0.1:$DYNAMODB_PORT (default 8000) and key files under $DATA_DIR (default .data).

Users
  user add <username> [--customer <customerId>]
                           create a user, enabled; the password is the first line of stdin
  user passwd <username>   set a new password, read from the first line of stdin; revokes
                           the user's sessions and access tokens
  user disable <username>  refuse the user's logins; revokes its sessions and access tokens
  user enable <username>   allow them again (revoked sessions stay revoked)
  user logout <username>   revoke every session and access token the user has now
  user remove <username>   delete the user; its sessions and access tokens stop verifying
  user show <username>     print the user as JSON (never the password hash), with its
                           scopes (null: every scope) and failed logins: failures,
                           lastAttemptAt, lockedUntil (null when not locked)
  user unlock <username>   clear the failed logins of the username, ending its lock; the
                           counters of source addresses are not touched (they only decay)
  user list [--customer <customerId>] [--disabled] [--locked]
                           every user (never a hash), as JSON Lines, or a table on a terminal
  user scopes <username> --scope <scope> [--scope <scope> ...]
                           narrow the user's tokens to these scopes; revokes its sessions
                           and access tokens (it logs in again for tokens with the new scopes)
  user scopes <username> --all
                           every scope again (also any added later); revokes as above
  user refold [--dry-run]  once per stage, before deploying a version that folds usernames in
                           full: move each user (and membership) stored under the key of the
                           old folding to its new key; names that now fold alike are listed,
                           left as they are, and exit 1. --dry-run writes nothing

Customers
  customer list            every customer with its number of addresses and depot code

API clients (OAuth 2.0 client credentials for an integrator's systems: docs/admin.md);
a <scope> is one of ${ALL_SCOPES.join(', ')}
  client add <customerId> --scope <scope> [--scope <scope> ...]
                           create a client acting for the customer with these scopes; prints
                           its client id, secret id and secret on stdout, the secret only
                           this once (only its digest is stored)
  client list [--customer <customerId>]
                           every client: id, customer, scopes, enabled, live secrets (id and
                           createdAt, never a digest), as JSON Lines, or a table on a terminal
  client disable <clientId>
                           refuse the client's grants; its access tokens stop within the
                           stage's revocation bound (revocationCacheTtl + authorizerCacheTtl)
  client enable <clientId> allow its grants again (revoked tokens stay revoked)
  client remove <clientId> delete the client; its access tokens stop as with disable
  client unlock <clientId> clear the failed authentications of the client id, ending its lock
                           (anyone who knows a client id can lock it, as a username); the
                           counters of source addresses are not touched
  client secret add <clientId>
                           a second live secret, printed once as with client add; refused
                           when the client has two (remove one first)
  client secret remove <clientId> <secretId>
                           the secret stops working, and so do the tokens granted with it;
                           refused for the client's last secret

Import and export (JSON Lines, one customer, user or client per line, or users alone in a
.csv file with a header row: docs/import-format.md)
  import <file> [--dry-run] [--skip-invalid]
                           check every record, then write customers, users and clients in
                           batches; existing ones are never overwritten. Nothing is written
                           if a record is invalid (--skip-invalid writes the valid ones).
                           Running it again changes nothing; an interrupted import resumes
  export [--include-password-hashes]
                           every customer, user and client as import records, to stdout;
                           users' password hashes and clients' secret digests only with the
                           option (a file with them is as secret as the stage's accounts)

Pickup addresses
  address add <customerId> --depot <code>
                           append a pickup address (--depot '' for none) and print it as JSON
  address list <customerId>
                           print the customer's pickup addresses in order, as JSON

Keys (a keyring: the active key signs, the next key is published a rotation ahead,
retired keys stay published until the tokens they signed have expired)
  keys init                local: create the keyring and key set files if missing
  keys init --stage <name> [--force]
                           create a keyring in SSM (SecureString, encrypted with the
                           stage's keyring key: kmsKeyArn, else the stack's own where
                           createKeyringKey is on, else aws/ssm) and its public key set
                           (String); --force replaces existing keys, and tokens signed with
                           the old keys stop verifying
  keys list                one line per key: kid, state (active, next, retired since ...),
                           published or not; exit 1 when a keyring key is not published
  keys rotate [--force]    the next key signs, a new next key is published, the active key
                           retires; refused within keyReloadInterval of the last rotation
                           (--force rotates anyway). Prints kids only, never key material
  keys revoke -- <kid>     a key leaked: it leaves the key set and the keyring at once, with
                           no retention, and so does every key that shared the keyring with
                           it (the one it succeeded, the one that succeeded it); revoking the
                           active or the next key replaces both (they share one secret).
                           Every token they signed is refused within keyReloadInterval plus
                           the authorizer's cache (docs/deploying.md).
                           The kid goes after --, since a kid may begin with -
  keys revoke --all        a leak of unknown date: every key goes, retired ones included, and
                           a fresh active and next key replace them (counter secret kept)

Options
  --stage <name>           a deployed stage: its tables, credentials from the AWS chain
                           (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)
  --region <region>        with --stage; default $AWS_REGION, else eu-central-1
  -h, --help               this text

Passwords are never arguments. Pipe them, or type them when prompted (not echoed):
  printf '%s\\n' "$NEW_PASSWORD" | npm run --silent admin -- user add alice --customer C-1001
A new password has at least 12 characters (Unicode code points) and at most 72 bytes in
UTF-8 (bcrypt ignores the rest), is not the username in any letter case, and has no control
characters and no U+FFFD (login refuses those).

Exit status: 0 done, 1 the operation failed, 2 a usage error or an invalid value.`;
