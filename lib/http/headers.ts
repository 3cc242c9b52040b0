/** The one case-insensitive header lookup: API Gateway passes names as the client spelled them. */

type Headers = Readonly<Record<string, string | undefined>> | null | undefined;

/** `wanted` is lower case. Plain code: it runs on every request. */
const named = (name: string, wanted: string) =>
  name.length === wanted.length && name.toLowerCase() === wanted;

export function header(headers: Headers, wanted: string): string | undefined {
  const map = headers ?? {};
  for (const name in map) {
    if (named(name, wanted)) return map[name];
  }
  return undefined;
}

/** The multi-value map's values when it has any, else the single-value map's. */
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
