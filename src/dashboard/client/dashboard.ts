/**
 * The project dashboard (signed-in `#/p/{domain}` and public `/share/{domain}`): controls,
 * filter chips, headline, chart and cards, all following one view (period or custom range,
 * comparison, filters) that lives in the URL. `update` moves the mounted dashboard to another
 * view in place: controls are redrawn, cards reload keeping their tab and their old content
 * until the new one arrives.
 */
import { timeseriesChart, type SeriesPoint } from './chart.js';
import { compareControl, filterButton, filterChips, periodControl, periodShortcuts } from './controls.js';
import { download, projectPath, query } from './api.js';
import { h, replace, statusLine } from './dom.js';
import { botsCard, funnelsCard, goalsCard, visitorsCard, vitalsCard } from './other-cards.js';
import { headline } from './headline.js';
import { realtimeView } from './realtime.js';
import { devicesCard, eventsCard, locationsCard, pagesCard, sourcesCard } from './report-cards.js';
import type { Ctx, ReportSource } from './source.js';
import { apiParams, type View } from './view.js';
import { card, empty, type Card } from './widgets.js';

export type { ReportSource } from './source.js';

interface Series {
  granularity: 'hour' | 'day' | 'month';
  data: SeriesPoint[];
  comparison?: { data: SeriesPoint[] };
}

/** A mounted dashboard: `update` shows another view without rebuilding the page. */
export interface Dashboard {
  update(view: View): void;
}

/**
 * Renders the dashboard of `source` for `view` into `root`; `navigate` is how a control asks for
 * another view (it changes the URL, whose change comes back through `update`).
 */
export function renderDashboard(root: HTMLElement, source: ReportSource, view: View, navigate: (next: View) => void): Dashboard {
  let current = view;
  // One context whose `view` is always the current one: a row clicked while its card still shows
  // the previous view's rows (reloading) adds its filter to the current view, not the old one.
  const context: Ctx = {
    source,
    get view() {
      return current;
    },
    navigate,
  };
  const ctx = () => context;
  const controls = h('div', { class: 'toolbar' });
  const chips = h('div', { class: 'chips-row' });
  const { live, now } = realtimeView(source);

  // The full export of the view's range and filters (no comparison).
  const exportStatus = statusLine();
  const exportButton = h('button', {
    type: 'button',
    class: 'secondary',
    onclick: async () => {
      exportStatus.clear();
      const range = { ...apiParams(current), compare: undefined };
      const label = current.period === 'custom' ? `custom-${current.from}-${current.to}` : current.period;
      try {
        const name = await download(projectPath(source.domain, `/export${query({ ...range, limit: 100 })}`), `sightline-${source.domain}-${label}.csv`);
        exportStatus.ok(`Downloaded ${name}`);
      } catch (err) {
        exportStatus.error((err as Error).message);
      }
    },
  }, 'Download CSV');
  const exportTools = source.share ? null : h('div', { class: 'csv' }, exportButton, exportStatus.el);

  const drawControls = () => {
    const focused = document.activeElement as HTMLElement | null;
    const focusId = focused?.id || (focused?.classList.contains('chip-remove') ? 'add-filter' : '');
    const add = filterButton(ctx());
    add.id = 'add-filter';
    replace(controls, periodControl(ctx()), compareControl(ctx()), add, live, exportTools);
    replace(chips, filterChips(ctx()));
    if (focusId) document.getElementById(focusId)?.focus();
  };

  const cards: Card[] = [
    card('Overview', () => headline(ctx()), { wide: true }),
    card('Visitors and pageviews', async () => {
      let s = await source.report<Series>('timeseries', apiParams(current));
      // Over a year of days reads better as months (Plausible's choice for long ranges and all time).
      if (s.granularity === 'day' && s.data.length > 366) s = await source.report<Series>('timeseries', { ...apiParams(current), interval: 'month' });
      const none = s.data.every((p) => p.pageviews === 0) && (s.comparison?.data ?? []).every((p) => p.pageviews === 0);
      return none ? empty() : timeseriesChart(s.data, s.granularity, s.comparison?.data);
    }, { wide: true }),
    sourcesCard(ctx),
    pagesCard(ctx),
    locationsCard(ctx),
    devicesCard(ctx),
    eventsCard(ctx),
    goalsCard(ctx),
    ...(source.share ? [] : [funnelsCard(ctx)]),
    card('Current visitors', async () => now),
    botsCard(ctx),
    vitalsCard(ctx),
    ...(source.share ? [] : [visitorsCard(ctx)]),
  ];
  // The realtime card's body is the live element itself: it refreshes on its own timer.
  const [realtimeCard] = cards.filter((c) => c.getAttribute('aria-label') === 'Current visitors');
  drawControls();
  replace(root, controls, chips, h('div', { class: 'grid' }, cards));
  periodShortcuts(ctx);
  return {
    update(next: View) {
      current = next;
      drawControls();
      for (const c of cards) if (c !== realtimeCard) c.reload();
    },
  };
}
