/** Number and date formatting shared by the email report and the alert messages (English, as the dashboard). */

const MINUS = '\u2212';

export const formatCount = (n: number) => Math.round(n).toLocaleString('en-US');

export const formatPercent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 100)}%`);

/** `45s`, `3m 05s`, `1h 02m`; `—` when there is no duration. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Direction of a change, for colouring: up, down, or none (no change, or nothing to compare). */
export type Trend = 'up' | 'down' | 'flat';

export interface Change {
  text: string;
  trend: Trend;
}

/** Relative change of a count or duration: `+12%`, `−5%`, `0%`; `new` from nothing; `—` when either side is missing. */
export function relativeChange(current: number | null, previous: number | null): Change {
  if (current === null || previous === null) return { text: '—', trend: 'flat' };
  if (previous === 0) return current === 0 ? { text: '0%', trend: 'flat' } : { text: 'new', trend: 'up' };
  const pct = Math.round(((current - previous) / previous) * 100);
  if (pct === 0) return { text: '0%', trend: 'flat' };
  return pct > 0 ? { text: `+${pct}%`, trend: 'up' } : { text: `${MINUS}${-pct}%`, trend: 'down' };
}

/** Change of a rate in percentage points: `+3 pp`, `−2 pp`, `0 pp`; `—` when either side is missing. */
export function pointChange(current: number | null, previous: number | null): Change {
  if (current === null || previous === null) return { text: '—', trend: 'flat' };
  const pp = Math.round(current * 100) - Math.round(previous * 100);
  if (pp === 0) return { text: '0 pp', trend: 'flat' };
  return pp > 0 ? { text: `+${pp} pp`, trend: 'up' } : { text: `${MINUS}${-pp} pp`, trend: 'down' };
}

/** `Mar 2 – Mar 8, 2026` (weekly) or `March 2026` (monthly) for [from, to) in `timeZone`. */
export function formatSpan(frequency: 'weekly' | 'monthly', from: number, to: number, timeZone: string): string {
  if (frequency === 'monthly') return new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone }).format(from);
  const day = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone });
  const year = new Intl.DateTimeFormat('en-US', { year: 'numeric', timeZone });
  // `to` is the exclusive end (midnight); the last day shown is the one before it.
  return `${day.format(from)} – ${day.format(to - 1)}, ${year.format(to - 1)}`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for HTML element content and attribute values. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
