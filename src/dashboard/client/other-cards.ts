/**
 * The cards that are not ranked lists: goals, funnels, bot traffic, Core Web Vitals and recent
 * visitors. They follow the view's range and filters, without comparison. Goals take only some
 * presets and bots presets only: those show the nearest one and say so in the card's note.
 */
import { h, type Child } from './dom.js';
import { flag, fmtDate, fmtDuration, fmtMoney, fmtNumber, fmtPercent, fmtVital, goalPeriod, periodLabel } from './format.js';
import type { Ctx } from './source.js';
import { apiParams, formatFilters, presetOf, type View } from './view.js';
import { openVisitor } from './visitor-drawer.js';
import { barTable, card, empty, n, type Card } from './widgets.js';

type Rows<T> = { data: T[] };

/** The view's range and filters, for reports without comparison. */
const rangeParams = (view: View) => ({ ...apiParams(view), compare: undefined });

/** Goals take custom ranges, all time and five presets: the view's range, or the nearest of those presets. */
const goalRange = (view: View) => (view.period === 'custom' || view.period === 'all' ? undefined : goalPeriod(view.period));

/** Preset and filters for a report that takes presets only. */
const presetParams = (view: View, period: string) => ({ period, filters: view.filters.length ? formatFilters(view.filters) : undefined });

/** "Shown for: last 30 days" when the card's period is not the view's. */
const noteFor = (view: View, period: string) => (period === view.period ? undefined : `Shown for: ${periodLabel(period).toLowerCase()}`);

const vitalsInfo: [string, string][] = [
  ['lcp', 'Largest Contentful Paint'],
  ['inp', 'Interaction to Next Paint'],
  ['cls', 'Cumulative Layout Shift'],
  ['fcp', 'First Contentful Paint'],
  ['ttfb', 'Time to First Byte'],
];
type Vital = { p75: number | null; avg: number | null; samples: number; rating: 'good' | 'needs-improvement' | 'poor' | null };

function vitals(overall: Record<string, Vital>): Child {
  if (vitalsInfo.every(([k]) => overall[k].samples === 0)) return empty('No Core Web Vitals recorded in this period.');
  return h(
    'ul',
    { class: 'vitals' },
    vitalsInfo.map(([k, label]) => {
      const m = overall[k];
      const rating = m.rating ?? 'none';
      const ratingText = { good: 'Good', 'needs-improvement': 'Needs improvement', poor: 'Poor', none: 'No data' }[rating];
      return h('li', { class: `vital ${rating}` }, h('abbr', { title: label }, k.toUpperCase()), h('strong', null, fmtVital(k, m.p75)), h('span', { class: 'rating' }, ratingText), h('small', null, `p75 · ${fmtNumber(m.samples)} samples`));
    }),
  );
}

type Goal = { id: string; name: string; type: string; target: number | null; current: number; conversionRate: number | null; format: string; currency: string | null };

function goalValue(g: Goal, value: number): string {
  if (g.format === 'currency') return fmtMoney(value, g.currency);
  if (g.format === 'duration') return fmtDuration(value);
  return fmtNumber(value);
}

function goals(list: Goal[]): Child {
  if (list.length === 0) return empty('No goals yet.');
  return h(
    'ul',
    { class: 'goals' },
    list.map((g) => {
      const progress = g.target ? Math.min(1, g.current / g.target) : null;
      return h(
        'li',
        null,
        h('div', { class: 'goal-head' }, h('strong', null, g.name), h('span', null, goalValue(g, g.current), g.target !== null ? ` of ${goalValue(g, g.target)}` : '', g.conversionRate !== null ? ` · ${fmtPercent(g.conversionRate, 1)} conversion` : '')),
        progress !== null ? h('progress', { max: '100', value: String(Math.round(progress * 100)), 'aria-label': `${g.name}: ${Math.round(progress * 100)}% of target` }) : null,
      );
    }),
  );
}

type FunnelResult = { funnel: { name: string }; steps: { index: number; type: string; value: string; visitors: number; conversionRate: number | null; dropOffRate: number | null }[] };

function funnelBars(result: FunnelResult): Child {
  const first = Math.max(1, result.steps[0]?.visitors ?? 0);
  return h(
    'div',
    { class: 'funnel' },
    h('h3', null, result.funnel.name),
    h(
      'ol',
      null,
      result.steps.map((s) =>
        h(
          'li',
          null,
          h('div', { class: 'step-label' }, h('span', null, `${s.type === 'event' ? 'Event' : 'Page'} ${s.value}`), h('span', null, `${fmtNumber(s.visitors)} visitors${s.conversionRate !== null ? ` · ${fmtPercent(s.conversionRate, 1)}` : ''}`)),
          h('div', { class: 'step-track' }, h('span', { class: 'step-bar', style: `width:${((s.visitors / first) * 100).toFixed(1)}%` })),
        ),
      ),
    ),
  );
}

type Bots = { data: { totals: Record<string, number>; topBots: { name: string; category: string; count: number; verified: number }[] } };

function bots(result: Bots): Child {
  const t = result.data.totals;
  if (t.all === 0) return empty('No bot traffic recorded in this period.');
  const categories: [string, string][] = [['ai_answer', 'AI answers'], ['indexing', 'Search indexing'], ['training', 'AI training'], ['other', 'Other']];
  return h(
    'div',
    null,
    h('dl', { class: 'mini-stats' }, h('div', null, h('dt', null, 'All hits'), h('dd', null, fmtNumber(t.all))), h('div', null, h('dt', null, 'Verified'), h('dd', null, fmtNumber(t.verified))), categories.map(([k, label]) => h('div', null, h('dt', null, label), h('dd', null, fmtNumber(t[k] ?? 0))))),
    barTable(result.data.topBots, [{ label: 'Bot', cell: (b) => b.name }, { label: 'Category', cell: (b) => b.category }, { label: 'Hits', cell: (b) => n(b.count), numeric: true }], (b) => b.count, 'Top bots'),
  );
}

type Visitor = { visitorId: string; lastSeen: string; pageviews: number; country: string | null; country_code: string | null; browser: string | null; device: string | null; lastPath: string | null };


/** Goals (progress; the share API drops their definitions), over the view's range or the nearest goal preset. */
export function goalsCard(ctx: () => Ctx): Card {
  const params = (view: View) => {
    const preset = goalRange(view);
    return preset ? presetParams(view, preset) : rangeParams(view);
  };
  return card('Goals', async () => goals((await ctx().source.report<{ goals: Goal[] }>('goals', params(ctx().view))).goals), {
    note: () => {
      const preset = goalRange(ctx().view);
      return preset ? noteFor(ctx().view, preset) : undefined;
    },
  });
}

/** Funnels (signed-in only: their definitions are private). */
export function funnelsCard(ctx: () => Ctx): Card {
  return card('Funnels', async () => {
    const { source, view } = ctx();
    const { funnels } = await source.report<{ funnels: { id: string }[] }>('funnels');
    if (funnels.length === 0) return empty('No funnels yet. Add one under Goals & funnels.');
    return (await Promise.all(funnels.map((f) => source.report<FunnelResult>(`funnels/${encodeURIComponent(f.id)}`, rangeParams(view))))).map(funnelBars);
  });
}

/** Bot traffic: bot hits have no visits, so filters do not apply (the note says so when some are set). */
export function botsCard(ctx: () => Ctx): Card {
  const period = () => goalPeriod(presetOf(ctx().view));
  return card('Bot traffic', async () => bots(await ctx().source.report<Bots>('bots', { period: period() })), {
    note: () => [noteFor(ctx().view, period()), ctx().view.filters.length ? 'Filters do not apply' : undefined].filter(Boolean).join(' · ') || undefined,
  });
}

/** Core Web Vitals of the kept vitals events. */
export function vitalsCard(ctx: () => Ctx): Card {
  return card('Core Web Vitals', async () => vitals((await ctx().source.report<{ overall: Record<string, Vital> }>('performance', rangeParams(ctx().view))).overall));
}

/** Recent visitors (signed-in only), each opening the visitor drawer. */
export function visitorsCard(ctx: () => Ctx): Card {
  return card('Recent visitors', async () => {
    const { source, view } = ctx();
    // The visitor drawer's profile takes presets only.
    const period = presetOf(view);
    const { data } = await source.report<Rows<Visitor>>('visitors', { ...rangeParams(view), limit: 10 });
    if (data.length === 0) return empty();
    return h(
      'ul',
      { class: 'visitor-list' },
      data.map((v) =>
        h(
          'li',
          null,
          h(
            'button',
            { type: 'button', class: 'link-like', onclick: () => openVisitor(source, v.visitorId, period) },
            h('span', { class: 'flag', 'aria-hidden': 'true' }, flag(v.country_code)),
            ` ${v.country ?? 'Unknown country'} · ${v.browser ?? 'Unknown browser'} on ${v.device ?? 'unknown device'}`,
          ),
          h('small', null, `${fmtNumber(v.pageviews)} pageviews · last ${v.lastPath ?? '—'} · ${fmtDate(v.lastSeen)}`),
        ),
      ),
    );
  }, { wide: true });
}
