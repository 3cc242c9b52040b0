/**
 * The one case-insensitive header lookup. API Gateway passes header names as the client sent
 * them (`authorization`, `Authorization`, …), and HTTP names are case-insensitive.
 */

/** Header names to values, as API Gateway's `headers` (and the authorizer event's) carry them. */
type Headers = Readonly<Record<string, string | undefined>> | null | undefined;

/** `name` spelled as `wanted` (lower case) in any letter case; plain code, as it runs on every request. */
const named = (name: string, wanted: string) =>
  name.length === wanted.length && name.toLowerCase() === wanted;

/** The value of the first header named `wanted` (lower case) in any letter case. */
export function header(headers: Headers, wanted: string): string | undefined {
  const map = headers ?? {};
  for (const name in map) {
    if (named(name, wanted)) return map[name];
  }
  return undefined;
}

/**
 * Every value of the header `wanted` (lower case), in any letter case: the multi-value map's
 * when it has any, else the single-value map's.
 */
export function headerValues(
  event: {
    readonly headers?: Headers;
    readonly multiValueHeaders?: Readonly<Record<string, string[] | undefined>> | null;
  },
  wanted: string,
): string[] {
  const values: string[] = [];
  const multi = event.multiValueHeaders ?? {};
  for (const name in multi) {
    if (named(name, wanted)) values.push(...(multi[name] ?? []));
  }
  if (values.length > 0) return values;
  const single = event.headers ?? {};
  for (const name in single) {
    const value = single[name];
    if (named(name, wanted) && value !== undefined) values.push(value);
  }
  return values;
}
