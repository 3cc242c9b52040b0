/**
 * Users in CSV, for `admin import users.csv`: a header row naming the columns (any order,
 * any subset of {@link COLUMNS}, `username` required), then one user per row. Each row
 * becomes the JSON Lines user record it stands for, at the index of the file line it ends
 * on (the header and blank lines become blank lines), so the importer checks it with the
 * same rules and reports its problems by the file's line number.
 *
 * The parser is csv-parse (RFC 4180: quoted fields, doubled quotes, CRLF or LF).
 */
import { parse } from 'csv-parse';
import { failure, fieldName } from './errors.ts';

export const COLUMNS = [
  'username',
  'customerId',
  'enabled',
  'passwordHash',
  'password',
  'createdAt',
] as const;
type Column = (typeof COLUMNS)[number];

/** A row as its JSON Lines user record: empty cells are absent, `enabled` true or false. */
export function userRecord(row: Partial<Record<Column, string>>): Record<string, unknown> {
  const record: Record<string, unknown> = { type: 'user' };
  for (const column of COLUMNS) {
    const value = row[column];
    if (value === undefined || value === '') continue;
    // Anything but true/false stays a string, for the record's validation to name.
    record[column] =
      column === 'enabled' && (value === 'true' || value === 'false') ? value === 'true' : value;
  }
  if (!('customerId' in record)) record.customerId = null;
  return record;
}

function header(names: string[]): Column[] {
  const unknown = names.filter((name) => !(COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const listed = unknown.map((name) => fieldName(name)).join(', ');
    throw failure(`CSV header: unknown column ${listed} (columns: ${COLUMNS.join(', ')})`);
  }
  const twice = names.filter((name, index) => names.indexOf(name) !== index);
  if (twice.length > 0)
    throw failure(`CSV header: column ${twice.map((name) => fieldName(name)).join(', ')} given twice`);
  if (!names.includes('username')) throw failure('CSV header: the username column is required');
  return names as Column[];
}

/** The lines of a users CSV as JSON Lines records, one per file line. */
export async function* csvUserLines(input: NodeJS.ReadableStream, path: string): AsyncGenerator<string> {
  const parser = input.pipe(
    parse({ columns: header, info: true, skip_empty_lines: true, bom: true, relax_column_count: false }),
  );
  let line = 1; // the header's
  yield '';
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Partial<Record<Column, string>>;
      info: { lines: number };
    }>) {
      for (; line < info.lines - 1; line += 1) yield '';
      line += 1;
      yield JSON.stringify(userRecord(record));
    }
  } catch (error) {
    if (error instanceof Error && 'code' in error && String(error.code).startsWith('CSV_')) {
      const at = 'lines' in error ? ` line ${error.lines}:` : '';
      throw failure(`${path}:${at} not valid CSV (${error.message})`);
    }
    throw error;
  }
}
