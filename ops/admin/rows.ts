/** Listings: JSON Lines for scripts, a table when stdout is a terminal. */
import type { CommandContext } from './context.ts';

/** A cell's text in the table; the default writes null and absent as `-`. */
export type CellText = (column: string, value: unknown) => string;

const plain: CellText = (_, value) => (value === null || value === undefined ? '-' : String(value));

/** Prints rows as JSON Lines, or as a table of `columns` when stdout is a terminal. */
export function printRows(
  context: CommandContext,
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
  text: CellText = plain,
) {
  if (!context.stdoutIsTTY) {
    for (const row of rows) context.print(JSON.stringify(row));
    return;
  }
  const cells = rows.map((row) => columns.map((column) => text(column, row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((row) => row[index]?.length ?? 0)),
  );
  const line = (values: readonly string[]) =>
    values.map((value, index) => value.padEnd(widths[index] ?? 0)).join('  ');
  context.print(line(columns));
  for (const row of cells) context.print(line(row));
  context.print(`${rows.length} row${rows.length === 1 ? '' : 's'}`);
}
