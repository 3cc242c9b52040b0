/**
 * The key usernames are unique by (docs/behaviour.md, "Usernames"): NFKD puts an iota subscript where
 * its Ι goes; lower (ẞ→ß) then upper (ß→SS) spells variants alike; lower again keeps ASCII lower case.
 * Apart from the username rule (repository.ts), so that what only keys an item (the authorizer's
 * read) bundles nothing else.
 */
export const foldUsername = (username: string) =>
  username.normalize('NFKD').toLowerCase().toUpperCase().toLowerCase().normalize('NFKC');

/** The longest folded username, in UTF-8 bytes: well inside DynamoDB's 2048-byte partition key. */
export const MAX_FOLDED_USERNAME_BYTES = 1024;
