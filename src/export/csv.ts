/**
 * CSV writing for the export and for `Accept: text/csv` on report routes.
 *
 * - RFC 4180: a cell is quoted when it holds `,` `"` CR or LF, with `"` doubled inside. Cells
 *   holding `#` are quoted too, so parsers run with `comment: '#'` never cut a value short.
 * - Formula injection: a *string* cell starting with `=` `+` `-` `@` TAB or CR would run as a
 *   formula in a spreadsheet; it gets a leading `'` and is quoted. Numbers are written as numbers
 *   (a count of -5 stays `-5`): only text from visitors can carry a formula.
 * - Lines end with CRLF (RFC 4180); comment lines start with `# `.
 */
import type { CsvColumn } from '../reports/definition.js';

/** What a cell may hold. `null`/`undefined` write an empty cell. */
export type CsvValue = string | number | boolean | null | undefined;

/** RFC 4180 line ending. */
export const CSV_EOL = '\r\n';

/** Leading characters that make spreadsheets evaluate a cell as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** Characters that force quoting (RFC 4180, plus `#` for comment-aware parsers). */
const NEEDS_QUOTES = /[",\r\n#]/;

/** Escapes one cell. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (FORMULA_START.test(value)) return `"'${value.replaceAll('"', '""')}"`;
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One data or header row, with its line ending. */
export function csvRow(values: readonly CsvValue[]): string {
  return values.map(csvCell).join(',') + CSV_EOL;
}

/**
 * A comment line (`# text`). Line breaks and other control characters in `text` become spaces,
 * so a comment can never spill into a data line.
 */
export function csvComment(text: string): string {
  // eslint-disable-next-line no-control-regex
  return `# ${text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()}${CSV_EOL}`;
}

/** A section: comment line naming it, header row, one line per row. */
export function csvSection<Row>(title: string, columns: readonly CsvColumn<Row>[], rows: readonly Row[]): string {
  let out = csvComment(title) + csvRow(columns.map((c) => c.header));
  for (const row of rows) out += csvRow(columns.map((c) => c.value(row)));
  return out;
}
