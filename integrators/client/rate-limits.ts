/**
 * The rate limits the service publishes (draft-ietf-httpapi-ratelimit-headers-10): the
 * RateLimit-Policy and RateLimit fields, read leniently, never failing a call.
 */
import type { Operation } from './errors.ts';

/** A quota the service publishes (RateLimit-Policy): `quota` units per `windowSeconds`. */
export interface RateLimitPolicy {
  readonly name: string;
  readonly quota: number;
  readonly windowSeconds?: number;
}

/** What is left of a policy's quota (RateLimit), whole again in `resetSeconds`. */
export interface RateLimitRemaining {
  readonly name: string;
  readonly remaining: number;
  readonly resetSeconds?: number;
}

/** The rate limits the last answer that published them stated (draft-ietf-httpapi-ratelimit-headers-10). */
export interface RateLimits {
  /** The call that answer was to. */
  readonly operation: Operation;
  /** When the answer came, by the client's clock: `resetSeconds` counts from here. */
  readonly receivedAt: number;
  readonly policies: readonly RateLimitPolicy[];
  readonly remaining: readonly RateLimitRemaining[];
}

/**
 * RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-10), e.g.
 * `"username";q=5;w=86400, "address";q=100;w=3600`: each policy's quota `q` per window of `w`
 * seconds. Undefined when the field is absent or malformed: a mistake in an advisory field
 * must not fail the call. A member without a whole `q` is skipped, other parameters ignored.
 */
export function parseRateLimitPolicy(value: string | null): RateLimitPolicy[] | undefined {
  return parseList(value)?.flatMap(({ name, parameters }) => {
    const quota = count(parameters.get('q'));
    if (name === undefined || quota === undefined) return [];
    const windowSeconds = count(parameters.get('w'));
    return [{ name, quota, ...(windowSeconds !== undefined && { windowSeconds }) }];
  });
}

/**
 * RateLimit (draft-ietf-httpapi-ratelimit-headers-10), e.g. `"username";r=4;t=172740`: what is
 * left of each policy's quota, `r`, and the seconds until it is whole again, `t`. Read as
 * parseRateLimitPolicy reads its field; a member without a whole `r` is skipped.
 */
export function parseRateLimit(value: string | null): RateLimitRemaining[] | undefined {
  return parseList(value)?.flatMap(({ name, parameters }) => {
    const remaining = count(parameters.get('r'));
    if (name === undefined || remaining === undefined) return [];
    const resetSeconds = count(parameters.get('t'));
    return [{ name, remaining, ...(resetSeconds !== undefined && { resetSeconds }) }];
  });
}

/** A whole number of at least 0 (a -0 made 0), or undefined. */
const count = (value: Bare) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value + 0 : undefined;

/** A member of a Structured Field List: its name if it is a string or token, and its parameters. */
interface ListMember {
  readonly name: string | undefined;
  readonly parameters: ReadonlyMap<string, Bare>;
}
/** A bare item as far as the rate limits need it: a string or token's text, a number, else undefined. */
type Bare = string | number | undefined;

/** Thrown inside FieldReader only, and caught by parseList. */
const MALFORMED = new SyntaxError('malformed structured field');
const SF_NUMBER = /-?\d{1,15}(?:\.\d{1,3})?/y;
const SF_TOKEN = /[A-Za-z*][!#$%&'*+\-.^_`|~\w:/]*/y;
const SF_KEY = /[a-z*][a-z\d_\-.*]*/iy;
const SF_BYTES = /:[A-Za-z\d+/=]*:/y;

/**
 * A Structured Field List (RFC 9651 section 4.2.1), read leniently: whitespace also before
 * `;` and around `=`, keys in any case. One mistake anywhere voids the field, as RFC 9651
 * says; never an exception. Linear in the field's length, whatever it holds.
 */
function parseList(field: string | null): ListMember[] | undefined {
  if (field === null || field.trim() === '') return undefined;
  try {
    return new FieldReader(field).list();
  } catch {
    return undefined;
  }
}

class FieldReader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  list(): ListMember[] {
    const members: ListMember[] = [];
    this.#space();
    for (;;) {
      members.push(this.#member());
      this.#space();
      if (this.#at === this.#text.length) return members;
      this.#take(',');
      this.#space();
    }
  }

  #member(): ListMember {
    if (this.#peek() !== '(') {
      const item = this.#bareItem();
      return { name: typeof item === 'string' ? item : undefined, parameters: this.#parameters() };
    }
    this.#at++;
    for (;;) {
      this.#space();
      if (this.#peek() === ')') break;
      this.#bareItem();
      this.#parameters();
    }
    this.#at++;
    return { name: undefined, parameters: this.#parameters() };
  }

  #parameters(): Map<string, Bare> {
    const parameters = new Map<string, Bare>();
    for (;;) {
      this.#space();
      if (this.#peek() !== ';') return parameters;
      this.#at++;
      this.#space();
      const key = this.#match(SF_KEY).toLowerCase();
      this.#space();
      // A key without a value is the boolean true: no count.
      let value: Bare;
      if (this.#peek() === '=') {
        this.#at++;
        this.#space();
        value = this.#bareItem();
      }
      parameters.set(key, value);
    }
  }

  #bareItem(): Bare {
    const first = this.#peek();
    if (first === '"') return this.#string();
    if (first === '-' || (first >= '0' && first <= '9')) return Number(this.#match(SF_NUMBER));
    if (first === '*' || /^[A-Za-z]$/.test(first)) return this.#match(SF_TOKEN);
    if (first === ':') this.#match(SF_BYTES);
    else if (first === '?') this.#match(/\?[01]/y);
    else if (first === '@') this.#match(/@-?\d{1,15}/y);
    else if (first === '%' && this.#text[this.#at + 1] === '"') {
      this.#at++;
      this.#string();
    } else throw MALFORMED;
    return undefined;
  }

  #string(): string {
    let text = '';
    for (this.#at++; ; ) {
      const char = this.#text[this.#at++];
      if (char === '"') return text;
      if (char === '\\') {
        const escaped = this.#text[this.#at++];
        if (escaped !== '"' && escaped !== '\\') throw MALFORMED;
        text += escaped;
      } else if (char === undefined || char < ' ' || char > '~') throw MALFORMED;
      else text += char;
    }
  }

  #match(pattern: RegExp): string {
    pattern.lastIndex = this.#at;
    const found = pattern.exec(this.#text)?.[0];
    if (found === undefined) throw MALFORMED;
    this.#at += found.length;
    return found;
  }

  #take(char: string) {
    if (this.#peek() !== char) throw MALFORMED;
    this.#at++;
  }

  #space() {
    while (this.#peek() === ' ' || this.#peek() === '\t') this.#at++;
  }

  /** The next character, or '' at the end. */
  #peek(): string {
    return this.#text[this.#at] ?? '';
  }
}
