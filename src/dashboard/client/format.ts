/** Formatting and period helpers shared by the pages. */

/** Every period the reports accept, in picker order, with its label. */
export const PERIODS = [
  ['24h', 'Last 24 hours'],
  ['today', 'Today'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['90d', 'Last 90 days'],
  ['6m', 'Last 6 months'],
  ['12m', 'Last 12 months'],
  ['this_week', 'This week'],
  ['this_month', 'This month'],
] as const;
export type Period = (typeof PERIODS)[number][0];

export const isPeriod = (s: string | null | undefined): s is Period => PERIODS.some(([k]) => k === s);
export const periodLabel = (p: string) => PERIODS.find(([k]) => k === p)?.[1] ?? ({ custom: 'Custom range', all: 'All time' } as Record<string, string>)[p] ?? p;

/**
 * Goals and bots accept only today, 7d, 30d, 6m and 12m: the closest of those to the picked
 * period (cards say which one they show when it differs).
 */
export function goalPeriod(p: Period): 'today' | '7d' | '30d' | '6m' | '12m' {
  const map: Record<Period, 'today' | '7d' | '30d' | '6m' | '12m'> = {
    '24h': 'today', today: 'today', '7d': '7d', this_week: '7d', '30d': '30d', this_month: '30d', '90d': '6m', '6m': '6m', '12m': '12m',
  };
  return map[p];
}

/** Relative change of `current` against `previous` as a fraction, or null when undefined. */
export function change(current: number, previous: number): number | null {
  if (previous === 0) return current === 0 ? 0 : null;
  return (current - previous) / previous;
}

const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** 1234 → "1,234"; above 100k → "123.4K". */
export const fmtNumber = (n: number) => (Math.abs(n) >= 100_000 ? compact.format(n) : integer.format(n));
export const fmtPercent = (f: number, digits = 0) => `${(f * 100).toFixed(digits)}%`;

/** Seconds as "1m 05s" / "42s"; null as an em dash. */
export function fmtDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Minor units and ISO currency → "€12.34". */
export function fmtMoney(cents: number | null, currency: string | null): string {
  if (cents === null || !currency) return '—';
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

/** ISO date-time → local "5 Jun 2026, 14:03"; null → "never". */
export function fmtDate(iso: string | null): string {
  if (!iso) return 'never';
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** ISO alpha-2 → flag emoji (regional indicators); unknown codes → a white flag. */
export function flag(code: string | null | undefined): string {
  if (!code || !/^[A-Za-z]{2}$/.test(code)) return '🏳';
  return String.fromCodePoint(...[...code.toUpperCase()].map((ch) => 0x1f1a5 + ch.charCodeAt(0)));
}

/** Web-vitals value with its unit: CLS is unitless, the rest milliseconds. */
export function fmtVital(metric: string, value: number | null): string {
  if (value === null) return '—';
  if (metric === 'cls') return value.toFixed(3);
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}
