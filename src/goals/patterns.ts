/** Characters with a meaning in RE2 syntax; escaped so a path pattern only knows `*`. */
const REGEX_SPECIAL = /[\\^$.|?*+()[\]{}]/g;

/**
 * Turns a path pattern into an anchored RE2 regex for ClickHouse `match()`: `*` matches any
 * sequence of characters, including `/` and the empty one; everything else matches itself.
 * The regex is always sent as a bound parameter, never spliced into SQL.
 */
export function pathPatternRegex(pattern: string): string {
  return `^${pattern.split('*').map((part) => part.replace(REGEX_SPECIAL, '\\$&')).join('.*')}$`;
}

