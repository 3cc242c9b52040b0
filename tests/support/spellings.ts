/**
 * Other spellings of a token: its signature's last character changed to every other one that
 * decodes to the same bytes. Found by decoding with Node's own base64url decoder, not by the
 * bit arithmetic lib/tokens uses, so the tests do not grade that code by itself.
 */
const ALPHABET = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];

/** Every spelling of `token` but its own whose signature decodes to the same bytes. */
export function respellings(token: string): string[] {
  const cut = token.lastIndexOf('.') + 1;
  const signature = token.slice(cut);
  const bytes = Buffer.from(signature, 'base64url');
  return ALPHABET.map((char) => `${signature.slice(0, -1)}${char}`)
    .filter((other) => other !== signature && Buffer.from(other, 'base64url').equals(bytes))
    .map((other) => `${token.slice(0, cut)}${other}`);
}
