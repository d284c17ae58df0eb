import { download, projectPath, query } from './api.js';
import { timeseriesChart, type SeriesPoint } from './chart.js';
import { h, replace, statusLine, type Child } from './dom.js';
import { change, COMPARISON, flag, fmtDate, fmtDuration, fmtMoney, fmtNumber, fmtPercent, fmtVital, goalPeriod, PERIODS, periodLabel, type Period } from './format.js';
import { barTable, card, empty, n, tabs } from './widgets.js';
import { openVisitor } from './visitor-drawer.js';

/** Where the dashboard reads reports from: the signed-in API, or the public share API. */
export interface ReportSource {
  domain: string;
  /** True on /share pages: read-only, aggregates only. */
  share: boolean;
  report<T>(name: string, params?: Record<string, string | number | undefined>): Promise<T>;
}

interface Stats { pageviews: number; visitors: number; sessions: number; avgDurationSeconds: number | null }
interface Series { granularity: 'hour' | 'day'; data: SeriesPoint[] }
type Rows<T> = { data: T[] };

/** The period picker; calls `onChange` with the new period. */
export function periodPicker(period: Period, onChange: (p: Period) => void): HTMLElement {
  const select = h('select', { id: 'period', onchange: (e: Event) => onChange((e.target as HTMLSelectElement).value as Period) }, PERIODS.map(([k, label]) => h('option', { value: k, selected: k === period }, label)));
  return h('div', { class: 'inline-field' }, h('label', { for: 'period' }, 'Period'), select);
}

/** Sum of the last `days` points and of the `days` before them. */
function windows(series: SeriesPoint[], days: number, key: 'pageviews' | 'visitors'): [number, number] {
  const sum = (pts: SeriesPoint[]) => pts.reduce((s, p) => s + p[key], 0);
  const end = series.length;
  return [sum(series.slice(end - days, end)), sum(series.slice(Math.max(0, end - 2 * days), end - days))];
}

function changeBadge(fraction: number | null, days: number): Child {
  if (fraction === null) return h('span', { class: 'change' }, 'new');
  const up = fraction >= 0;
  const text = `${up ? '▲' : '▼'} ${fmtPercent(Math.abs(fraction))}`;
  return h('span', { class: `change ${fraction === 0 ? '' : up ? 'up' : 'down'}`, title: `Compared with the previous ${days === 1 ? 'day' : `${days} days`}` }, text, h('span', { class: 'sr-only' }, ` vs previous ${days === 1 ? 'day' : `${days} days`}`));
}

async function headline(source: ReportSource, period: Period): Promise<Child> {
  const cmp = COMPARISON[period];
  const [stats, series] = await Promise.all([
    source.report<Stats>('stats', { period }),
    cmp ? source.report<Series>('timeseries', { period: cmp.series }).catch(() => null) : Promise.resolve(null),
  ]);
  const badge = (key: 'pageviews' | 'visitors') => {
    if (!cmp || !series) return null;
    const [now, before] = windows(series.data, cmp.days, key);
    return changeBadge(change(now, before), cmp.days);
  };
  const stat = (label: string, value: string, extra: Child = null) => h('div', { class: 'stat' }, h('dt', null, label), h('dd', null, h('span', { class: 'stat-value' }, value), extra));
  return h(
    'dl',
    { class: 'stats' },
    stat('Visitors', fmtNumber(stats.visitors), badge('visitors')),
    stat('Pageviews', fmtNumber(stats.pageviews), badge('pageviews')),
    stat('Sessions', fmtNumber(stats.sessions)),
    stat('Avg. visit', fmtDuration(stats.avgDurationSeconds)),
  );
}

/**
 * Realtime visitors: visitors seen in the last 5 minutes, counted from the 24-hour "recent
 * visitors" report (ordered by last seen, up to 100), so exact up to 100 concurrent visitors.
 */
async function realtime(source: ReportSource, el: HTMLElement): Promise<void> {
  try {
    const { data } = await source.report<Rows<{ lastSeen: string }>>('visitors', { period: '24h', limit: 100 });
    const since = Date.now() - 5 * 60_000;
    const count = data.filter((v) => Date.parse(v.lastSeen) >= since).length;
    replace(el, h('span', { class: 'pulse', 'aria-hidden': 'true' }), `${count}${count === 100 ? '+' : ''} ${count === 1 ? 'visitor' : 'visitors'} in the last 5 minutes`);
  } catch {
    replace(el, 'Realtime count unavailable');
  }
}

function referrerLabel(r: string): Child {
  return r === '(direct)' ? 'Direct / none' : r;
}

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

/**
 * The project dashboard: toolbar, headline stats, chart and report cards. On share pages the
 * per-visitor cards, funnels, realtime and CSV are left out (the public API has none of them).
 */
export function renderDashboard(root: HTMLElement, source: ReportSource, period: Period, onPeriod: (p: Period) => void): void {
  const gp = goalPeriod(period);
  const gpNote = gp === period ? undefined : `Shown for: ${periodLabel(gp).toLowerCase()}`;
  const live = h('p', { class: 'realtime', 'aria-live': 'polite' }, 'Counting current visitors…');
  const csv = statusLine();
  const csvButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        csv.clear();
        try {
          const name = await download(projectPath(source.domain, `/export${query({ period, limit: 100 })}`), `sightline-${source.domain}-${period}.csv`);
          csv.ok(`Downloaded ${name}`);
        } catch (err) {
          csv.error((err as Error).message);
        }
      },
    },
    'Download CSV',
  );
  const toolbar = h('div', { class: 'toolbar' }, periodPicker(period, onPeriod), source.share ? null : live, source.share ? null : h('div', { class: 'csv' }, csvButton, csv.el));
  if (!source.share) void realtime(source, live);

  const limit = { period, limit: 10 };
  const cards: HTMLElement[] = [
    card('Overview', () => headline(source, period), { wide: true }),
    card('Visitors and pageviews', async () => {
      const s = await source.report<Series>('timeseries', { period });
      return s.data.every((p) => p.pageviews === 0) ? empty() : timeseriesChart(s.data, s.granularity);
    }, { wide: true }),
    card('Top pages', async () => barTable((await source.report<Rows<{ path: string; pageviews: number; visitors: number }>>('pages', limit)).data, [{ label: 'Page', cell: (r) => r.path }, { label: 'Visitors', cell: (r) => n(r.visitors), numeric: true }, { label: 'Pageviews', cell: (r) => n(r.pageviews), numeric: true }], (r) => r.pageviews, 'Top pages')),
    card('Referrers', async () => barTable((await source.report<Rows<{ referrer: string; pageviews: number; visitors: number }>>('referrers', limit)).data, [{ label: 'Source', cell: (r) => referrerLabel(r.referrer) }, { label: 'Visitors', cell: (r) => n(r.visitors), numeric: true }, { label: 'Pageviews', cell: (r) => n(r.pageviews), numeric: true }], (r) => r.pageviews, 'Referrers')),
    card('Countries', async () => barTable((await source.report<Rows<{ country: string; country_code: string; visitors: number; pageviews: number }>>('countries', limit)).data, [{ label: 'Country', cell: (r) => [h('span', { class: 'flag', 'aria-hidden': 'true' }, flag(r.country_code)), ' ', r.country] }, { label: 'Visitors', cell: (r) => n(r.visitors), numeric: true }], (r) => r.visitors, 'Countries')),
    card('Cities', async () => barTable((await source.report<Rows<{ city: string; country: string; country_code: string; visitors: number }>>('cities', limit)).data, [{ label: 'City', cell: (r) => [h('span', { class: 'flag', 'aria-hidden': 'true' }, flag(r.country_code)), ' ', `${r.city}, ${r.country}`] }, { label: 'Visitors', cell: (r) => n(r.visitors), numeric: true }], (r) => r.visitors, 'Cities')),
    card('Devices', async () => {
      const d = await source.report<{ devices: { name: string; visitors: number }[]; browsers: { name: string; visitors: number }[]; os: { name: string; visitors: number }[] }>('devices', { period });
      const table = (rows: { name: string; visitors: number }[], label: string) => () => barTable(rows, [{ label, cell: (r) => r.name }, { label: 'Visitors', cell: (r) => n(r.visitors), numeric: true }], (r) => r.visitors, label);
      return tabs([{ label: 'Devices', render: table(d.devices, 'Device') }, { label: 'Browsers', render: table(d.browsers, 'Browser') }, { label: 'OS', render: table(d.os, 'Operating system') }]);
    }),
    card('Events', async () => barTable((await source.report<Rows<{ name: string; people: number; events: number; amountCents: number | null; currency: string | null }>>('events', { period, limit: 20 })).data, [{ label: 'Event', cell: (r) => r.name }, { label: 'People', cell: (r) => n(r.people), numeric: true }, { label: 'Count', cell: (r) => n(r.events), numeric: true }, { label: 'Revenue', cell: (r) => fmtMoney(r.amountCents, r.currency), numeric: true }], (r) => r.events, 'Events')),
    card('Goals', async () => goals((await source.report<{ goals: Goal[] }>('goals', { period: gp })).goals), { note: gpNote }),
  ];
  if (!source.share) {
    cards.push(
      card('Funnels', async () => {
        const { funnels } = await source.report<{ funnels: { id: string }[] }>('funnels');
        if (funnels.length === 0) return empty('No funnels yet. Add one under Goals & funnels.');
        return (await Promise.all(funnels.map((f) => source.report<FunnelResult>(`funnels/${encodeURIComponent(f.id)}`, { period })))).map(funnelBars);
      }),
    );
  }
  cards.push(
    card('Bot traffic', async () => bots(await source.report<Bots>('bots', { period: gp })), { note: gpNote }),
    card('Core Web Vitals', async () => vitals((await source.report<{ overall: Record<string, Vital> }>('performance', { period })).overall)),
  );
  if (!source.share) {
    cards.push(
      card('Recent visitors', async () => {
        const { data } = await source.report<Rows<Visitor>>('visitors', limit);
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
      }, { wide: true }),
    );
  }
  replace(root, toolbar, h('div', { class: 'grid' }, cards));
}
