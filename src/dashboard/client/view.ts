/**
 * What the dashboard shows — period (or custom range), comparison and filters — and its two
 * written forms: the hash query (`#/p/{domain}?period=7d&filters=…&compare=previous_period`, so a
 * link opens the same view and Back undoes a step) and the API's query parameters. Filters travel
 * in the API's own `filters=` grammar (src/analysis/filters.ts), so the URL and the request hold
 * the same text.
 */
import { isPeriod, type Period } from './format.js';

export type FilterOp = 'is' | 'is_not' | 'contains';
export interface Filter {
  dimension: string;
  op: FilterOp;
  values: string[];
}
export type Compare = 'previous_period' | 'year_over_year';
export type RangePeriod = Period | 'custom' | 'all';

export interface View {
  period: RangePeriod;
  /** Custom range: both dates, YYYY-MM-DD in the project zone. */
  from?: string;
  to?: string;
  compare?: Compare;
  filters: Filter[];
}

const SYMBOL: Record<FilterOp, string> = { is: '==', is_not: '!=', contains: '~=' };
const OP_OF: Record<string, FilterOp> = { '==': 'is', '!=': 'is_not', '~=': 'contains' };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Backslash before each character the grammar reserves. */
const escape = (text: string) => text.replace(/[\\;|=!~]/g, (ch) => `\\${ch}`);

/** Filters as `filters=` text. */
export function formatFilters(filters: readonly Filter[]): string {
  return filters.map((f) => `${escape(f.dimension)}${SYMBOL[f.op]}${f.values.map(escape).join('|')}`).join(';');
}

/** `filters=` text back into filters; a condition that does not parse is dropped (a hand-edited link). */
export function parseFilters(text: string): Filter[] {
  const out: Filter[] = [];
  for (const condition of splitUnescaped(text, ';')) {
    const m = findOperator(condition);
    if (!m) continue;
    const dimension = unescape(condition.slice(0, m.at));
    const values = splitUnescaped(condition.slice(m.at + 2), '|').map(unescape);
    if (dimension && values.length) out.push({ dimension, op: m.op, values });
  }
  return out;
}

function splitUnescaped(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text[++i];
    } else if (ch === sep) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return sep === ';' ? parts.filter(Boolean) : parts;
}

function findOperator(condition: string): { at: number; op: FilterOp } | null {
  for (let i = 0; i < condition.length - 1; i++) {
    if (condition[i] === '\\') {
      i++;
      continue;
    }
    const op = OP_OF[condition.slice(i, i + 2)];
    if (op) return { at: i, op };
  }
  return null;
}

const unescape = (text: string) => text.replace(/\\(.)/g, '$1');

/** The view a hash query names; anything missing or malformed falls back to the defaults (30 days, no filter). */
export function parseView(params: URLSearchParams): View {
  const p = params.get('period');
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const custom = p === 'custom' && DATE.test(from) && DATE.test(to) && from <= to;
  const period: RangePeriod = custom ? 'custom' : p === 'all' ? 'all' : isPeriod(p) ? p : '30d';
  const c = params.get('compare');
  return {
    period,
    ...(custom ? { from, to } : {}),
    ...(c === 'previous_period' || c === 'year_over_year' ? { compare: c } : {}),
    filters: parseFilters(params.get('filters') ?? ''),
  };
}

/** The hash query of a view (without `?`); defaults are left out so plain links stay short. */
export function viewQuery(view: View): string {
  const q = new URLSearchParams();
  if (view.period !== '30d') q.set('period', view.period);
  if (view.period === 'custom' && view.from && view.to) {
    q.set('from', view.from);
    q.set('to', view.to);
  }
  if (view.compare) q.set('compare', view.compare);
  if (view.filters.length) q.set('filters', formatFilters(view.filters));
  return q.toString();
}

/** The API's range, comparison and filter parameters of a view. */
export function apiParams(view: View, extra: readonly Filter[] = []): Record<string, string | undefined> {
  const filters = [...view.filters, ...extra];
  return {
    period: view.period,
    from: view.period === 'custom' ? view.from : undefined,
    to: view.period === 'custom' ? view.to : undefined,
    compare: view.compare,
    filters: filters.length ? formatFilters(filters) : undefined,
  };
}

/**
 * The view with `filter` added. An `is` filter replaces an earlier `is` filter on the same
 * dimension (clicking a second source switches to it, as Plausible does); others are appended.
 */
export function withFilter(view: View, filter: Filter): View {
  const rest = filter.op === 'is' ? view.filters.filter((f) => !(f.dimension === filter.dimension && f.op === 'is')) : view.filters;
  return { ...view, filters: [...rest, filter] };
}

/** The view without its filter at `index`. */
export const withoutFilter = (view: View, index: number): View => ({ ...view, filters: view.filters.filter((_, i) => i !== index) });

/** Today's date (YYYY-MM-DD) in `timeZone`. */
export function todayIn(timeZone: string): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

/**
 * The preset a report that accepts only presets shows for a view: the period itself, or for
 * custom ranges the last 30 days and for all time the last 12 months (cards say so).
 */
export const presetOf = (view: View): Period => (view.period === 'custom' ? '30d' : view.period === 'all' ? '12m' : view.period);
