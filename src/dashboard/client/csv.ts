/**
 * CSV of what a details list shows, built in the browser: the rows on screen, nothing fetched
 * again. Cells follow the server's rules (src/export/csv.ts): RFC 4180 quoting, and a text cell
 * starting with = + - @ tab or CR gets a leading ' (formula injection); numbers stay numbers.
 */
import { saveFile } from './dom.js';

type Cell = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n#]/;

/** One escaped cell. */
export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (FORMULA_START.test(value)) return `"'${value.replaceAll('"', '""')}"`;
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A header row and data rows, CRLF line ends. */
export function toCsv(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(',') + '\r\n').join('');
}

/** Hands `text` to the browser as a download named `name`. */
export function saveCsv(name: string, text: string): void {
  saveFile(name, new Blob([text], { type: 'text/csv;charset=utf-8' }));
}
