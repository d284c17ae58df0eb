/**
 * Text as it may be stored. Every string an ingest path puts in a row passes `validText` (the row
 * builders in pipeline.ts call it; the queue consumer runs `validRowText` over what it takes
 * from the queue), so one hostile value cannot make ClickHouse refuse a whole batch.
 *
 * - A lone UTF-16 surrogate (`"x\ud800"` is valid JSON) becomes U+FFFD. JSON.stringify would
 *   write it as the escape `\ud800`, which ClickHouse refuses for the whole insert ("missing
 *   second part of surrogate pair"); the RowBinary writer's UTF-8 encoder already wrote U+FFFD.
 * - NUL and the other C0 controls (U+0000–U+001F, tab and newlines included) are dropped: they
 *   have no place in a path, a name or a label, and break the CSV and terminal output of reports.
 * - Invalid UTF-8 bytes never get this far as such: bodies are decoded with a non-fatal
 *   TextDecoder, which already turns them into U+FFFD.
 */

// String.prototype.isWellFormed/toWellFormed are ES2024 (Node ≥ 20, workerd); the project's TS lib is ES2023.
declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

const C0 = /[\u0000-\u001f]/;
const C0_ALL = /[\u0000-\u001f]/g;

/**
 * `s` made valid for storage: lone surrogates → U+FFFD, C0 controls removed. Clean text (nearly
 * all of it) is returned as it is, after one regex test and one native well-formedness check.
 */
export function validText(s: string): string {
  if (!C0.test(s) && s.isWellFormed()) return s;
  return s.toWellFormed().replace(C0_ALL, '');
}

/** Whether `validText` would return `s` unchanged. */
export const isValidText = (s: string): boolean => !C0.test(s) && s.isWellFormed();

/** A Map column's value (props) as JSON or a queue message gives it; not a class instance such as a UInt64. */
const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * A row (column → value) with every string made valid, and the keys and values of its Map
 * columns (props). For rows that did not come from this process's row builders (queue messages
 * written by another deploy); those builders already call validText field by field. Returns the
 * same object when nothing needed a change.
 */
export function validRowText(row: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in row) {
    const value = row[key];
    let fixed: unknown = value;
    if (typeof value === 'string') fixed = validText(value);
    else if (isPlainObject(value)) fixed = validMapText(value);
    if (fixed !== value) (out ??= { ...row })[key] = fixed;
  }
  return out ?? row;
}

/** A Map(String, String) column's object with valid keys and values; the same object when already valid. */
export function validMapText(map: Record<string, unknown>): Record<string, unknown> {
  let dirty = false;
  for (const key in map) {
    const value = map[key];
    if (!isValidText(key) || (typeof value === 'string' && !isValidText(value))) {
      dirty = true;
      break;
    }
  }
  if (!dirty) return map;
  // fromEntries defines own keys, so a key that reads `__proto__` stays a key.
  return Object.fromEntries(Object.entries(map).map(([key, value]) => [validText(key), typeof value === 'string' ? validText(value) : value]));
}
