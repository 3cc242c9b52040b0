/**
 * docs/performance-floors.svg: per function, its time against its floor, from one run's own
 * numbers. Each row is scaled to its floor (the floor's bar is 1×), so a microsecond
 * authorizer and a hundred-second import read on one axis; the tick is the row's limit.
 */

export interface FloorRow {
  readonly label: string;
  /** What the row times, e.g. `warm call` or `cold start beyond an empty handler`. */
  readonly what: string;
  readonly floorLabel: string;
  readonly value: number;
  readonly floor: number;
  /** How both are printed, e.g. `(v) => '3.2 ms'`. */
  readonly format: (value: number) => string;
  /** The largest value ÷ floor that passes. */
  readonly limit: number;
  /** How the limit reads, when not as a ratio, e.g. `floor + 2 ms`. */
  readonly limitLabel?: string;
}

const xml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const WIDTH = 1020;
const LABEL_WIDTH = 300;
const BAR_LEFT = LABEL_WIDTH + 10;
const BAR_WIDTH = 380;
const ROW_HEIGHT = 56;
const TOP = 46;

export function floorChart(rows: readonly FloorRow[], title: string): string {
  const ratios = rows.map((row) => row.value / row.floor);
  const axisMax = Math.max(
    1.5,
    Math.ceil(Math.max(...ratios, ...rows.map((row) => row.limit)) * 4) / 4 + 0.25,
  );
  const x = (ratio: number) => BAR_LEFT + (ratio / axisMax) * BAR_WIDTH;
  const height = TOP + rows.length * ROW_HEIGHT + 34;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${xml(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${xml(title)}</text>`,
    `<text x="10" y="38" fill="#555">Each row scaled to its own floor (grey, 1×); blue passes its limit (tick), red does not.</text>`,
  ];
  for (const tick of [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5].filter((value) => value <= axisMax)) {
    parts.push(
      `<line x1="${x(tick)}" y1="${TOP}" x2="${x(tick)}" y2="${TOP + rows.length * ROW_HEIGHT}" stroke="#e5e5e5"/>`,
      `<text x="${x(tick)}" y="${TOP + rows.length * ROW_HEIGHT + 14}" text-anchor="middle" fill="#555">${tick}×</text>`,
    );
  }
  rows.forEach((row, index) => {
    const top = TOP + index * ROW_HEIGHT;
    const ratio = row.value / row.floor;
    const pass = ratio <= row.limit;
    parts.push(
      `<text x="10" y="${top + 20}" font-weight="bold">${xml(row.label)}</text>`,
      `<text x="10" y="${top + 36}" fill="#555">${xml(row.what)}</text>`,
      `<rect x="${BAR_LEFT}" y="${top + 8}" width="${x(1) - BAR_LEFT}" height="14" fill="#bdbdbd"/>`,
      `<rect x="${BAR_LEFT}" y="${top + 26}" width="${Math.max(1, x(Math.min(ratio, axisMax)) - BAR_LEFT)}" height="14" fill="${pass ? '#2f6fb3' : '#c62828'}"/>`,
      `<line x1="${x(row.limit)}" y1="${top + 4}" x2="${x(row.limit)}" y2="${top + 44}" stroke="#222" stroke-width="2"/>`,
      `<text x="${BAR_LEFT + BAR_WIDTH + 14}" y="${top + 19}" fill="#555">${xml(`${row.floorLabel}: ${row.format(row.floor)}`)}</text>`,
      `<text x="${BAR_LEFT + BAR_WIDTH + 14}" y="${top + 37}">${xml(`${row.format(row.value)} = ${ratio.toFixed(2)}× (limit ${row.limitLabel ?? `${row.limit.toFixed(2)}×`})`)}</text>`,
    );
  });
  parts.push(
    `<text x="${BAR_LEFT + BAR_WIDTH / 2}" y="${height - 6}" text-anchor="middle" fill="#555">time ÷ floor</text>`,
    '</svg>',
    '',
  );
  return parts.join('\n');
}
