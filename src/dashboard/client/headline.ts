/**
 * The headline numbers: visitors, visits, pageviews, views per visit, bounce rate and visit
 * duration of the view (filters included), and with a comparison each one's change as the API's
 * `compare=` answers it. Bounce rate changes are shown in percentage points, as Plausible does.
 */
import { h, type Child } from './dom.js';
import { fmtDuration, fmtNumber, fmtPercent } from './format.js';
import { changeClass, changeText } from './lists.js';
import type { Ctx } from './source.js';
import { apiParams } from './view.js';

type Numbers = { pageviews: number; visitors: number; sessions: number; avgDurationSeconds: number | null; bounceRate: number | null; viewsPerVisit: number | null };
type Stats = Numbers & { comparison?: Numbers & { from: string; to: string } };

interface Stat {
  key: keyof Numbers;
  label: string;
  show: (v: number | null) => string;
  /** Rates compare by difference (points), counts by ratio. */
  points?: boolean;
  lowerIsBetter?: boolean;
}

const STATS: Stat[] = [
  { key: 'visitors', label: 'Visitors', show: (v) => fmtNumber(v ?? 0) },
  { key: 'sessions', label: 'Visits', show: (v) => fmtNumber(v ?? 0) },
  { key: 'pageviews', label: 'Pageviews', show: (v) => fmtNumber(v ?? 0) },
  { key: 'viewsPerVisit', label: 'Views per visit', show: (v) => (v === null ? '—' : v.toFixed(2)) },
  { key: 'bounceRate', label: 'Bounce rate', show: (v) => (v === null ? '—' : fmtPercent(v)), points: true, lowerIsBetter: true },
  { key: 'avgDurationSeconds', label: 'Visit duration', show: fmtDuration },
];

function pointsText(now: number | null, before: number | null): string {
  if (now === null || before === null) return '—';
  const d = Math.round((now - before) * 100);
  return `${d > 0 ? '+' : d < 0 ? '−' : ''}${Math.abs(d)} pp`;
}

function badge(stat: Stat, now: number | null, before: number | null, against: string): Child {
  const text = stat.points ? pointsText(now, before) : changeText(now, before);
  return h('span', { class: changeClass(now, before, stat.lowerIsBetter), title: `${stat.show(before)} ${against}` }, text, h('span', { class: 'sr-only' }, ` ${against} (${stat.show(before)})`));
}

/** The headline block of the view. */
export async function headline(ctx: Ctx): Promise<Child> {
  const stats = await ctx.source.report<Stats>('stats', apiParams(ctx.view));
  const against = ctx.view.compare === 'year_over_year' ? 'vs same period last year' : 'vs previous period';
  return h(
    'dl',
    { class: 'stats' },
    STATS.map((s) =>
      h(
        'div',
        { class: 'stat' },
        h('dt', null, s.label),
        h('dd', null, h('span', { class: 'stat-value' }, s.show(stats[s.key])), stats.comparison ? badge(s, stats[s.key], stats.comparison[s.key], against) : null),
      ),
    ),
  );
}
