/** Retry-After (RFC 9110 section 10.2.3): how long a 429 or 503 asks the client to wait. */

/**
 * Retry-After as delta-seconds or an HTTP-date (RFC 9110 section 10.2.3), in milliseconds
 * from `now`; undefined for anything else. Date.parse is not used: it reads "1.5" as a date in
 * 2001 and asctime as local time.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // RFC 9111 section 1.2.2 takes 2^31 for a larger delta-seconds.
  if (/^\d+$/.test(text)) return Math.min(Number.parseInt(text, 10), 2 ** 31) * 1000;
  const date = httpDate(text, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = `(?<month>${MONTHS.join('|')})`;
const TIME = '(?<hour>\\d\\d):(?<minute>\\d\\d):(?<second>\\d\\d)';
/** RFC 9110 section 5.6.7: IMF-fixdate, and the obsolete rfc850-date and asctime-date a recipient still reads. */
const HTTP_DATES = [
  new RegExp(`^${WEEKDAY}, (?<day>\\d\\d) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`),
  new RegExp(
    `^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\\d\\d)-${MONTH}-(?<year>\\d\\d) ${TIME} GMT$`,
  ),
  new RegExp(`^${WEEKDAY} ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`),
];

/** An HTTP-date in epoch milliseconds; a two-digit year is the latest that is not 50 years ahead. */
function httpDate(text: string, now: number): number | undefined {
  const fields = HTTP_DATES.map((form) => form.exec(text)?.groups).find((groups) => groups !== undefined);
  if (fields === undefined) return undefined;
  const day = Number(fields.day);
  const hour = Number(fields.hour);
  const minute = Number(fields.minute);
  const second = Number(fields.second);
  let year = Number(fields.year);
  if (fields.year?.length === 2) {
    year += 2000;
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
  }
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  return Date.UTC(year, MONTHS.indexOf(fields.month ?? ''), day, hour, minute, second);
}
