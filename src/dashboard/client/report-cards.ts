/**
 * The tabbed list cards (Plausible's layout): Sources | Channels | UTM; Pages | Entry pages |
 * Exit pages (| Hostnames); Countries | Regions | Cities; Devices | Browsers | OS; Events |
 * Properties. A tab's top rows come from its fixed report where one exists with ranges, compare
 * and filters (pages, referrers, countries, cities: the rollup fast path when unfiltered), else
 * from GET breakdown; "Details" opens the full list (details.ts).
 */
import { openDetails } from './details.js';
import { field, h, replace, uid, type Child } from './dom.js';
import { flag } from './format.js';
import { breakdownRows, rowsTable, topRows, type ListSpec, type Row } from './lists.js';
import type { Ctx } from './source.js';
import { apiParams } from './view.js';
import { card, tabList, type Card } from './widgets.js';

/** One tab: a list (with details), or its own content. */
export interface Tab {
  label: string;
  spec?: ListSpec;
  render?: (ctx: Ctx) => Promise<Child>;
}

const VISITORS = [{ key: 'visitors', label: 'Visitors' }];
const PV_V = [{ key: 'pageviews', label: 'Pageviews' }, { key: 'visitors', label: 'Visitors' }];
const V_PV = [{ key: 'visitors', label: 'Visitors' }, { key: 'pageviews', label: 'Pageviews' }];

type Ranked = { data: (Record<string, string | number> & { comparison?: Record<string, number> })[] };

/** Top rows of a fixed ranked report (limit 10), each row named by its `key` field. */
const fixed = (report: string, key: string, display?: (r: Record<string, string | number>) => Child) => async (ctx: Ctx): Promise<Row[]> => {
  const { data } = await ctx.source.report<Ranked>(report, { ...apiParams(ctx.view), limit: 10 });
  return data.map((r) => ({ value: String(r[key]), display: display?.(r), metrics: { pageviews: Number(r.pageviews), visitors: Number(r.visitors) }, comparison: r.comparison }));
};

const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null;
const countryName = (code: string) => {
  try {
    return regionNames?.of(code) ?? code;
  } catch {
    return code;
  }
};
const withFlag = (code: string, text: string): Child => [h('span', { class: 'flag', 'aria-hidden': 'true' }, flag(code)), ' ', text];
const sourceName = (s: string) => (s === '(direct)' ? 'Direct / none' : s);

const list = (label: string, column: string, dimension: string, metrics = VISITORS, more: Partial<ListSpec> = {}): Tab => ({ label, spec: { label, column, dimension, metrics, ...more } });

/**
 * A card whose tabs each show a list or their own content; "Details" (lists only) opens the
 * full list of the selected tab. `addTab` appends a tab later (hostnames, once known).
 */
export function tabbedCard(title: string, tabs: Tab[], ctx: () => Ctx, opts: { wide?: boolean } = {}): Card & { addTab(tab: Tab): void } {
  let selected = 0;
  const slot = h('div', { class: 'card-tabs' });
  const details = h('button', { type: 'button', class: 'secondary small', onclick: () => tabs[selected]!.spec && openDetails(ctx(), tabs[selected]!.spec!) }, 'Details');
  const load = () => {
    const tab = tabs[selected]!;
    details.hidden = !tab.spec;
    details.setAttribute('aria-label', `Details: ${tab.label}`);
    return tab.render ? tab.render(ctx()) : topRows(ctx(), tab.spec!).then((rows) => rowsTable(ctx(), tab.spec!, rows));
  };
  const c = card(title, load, { wide: opts.wide, head: slot, foot: h('div', { class: 'card-foot' }, details) });
  const body = c.querySelector('.card-body') as HTMLElement;
  const drawTabs = () =>
    replace(slot, tabList(tabs.map((t) => t.label), body, `${title} views`, (i) => {
      selected = i;
      c.reload();
    }, selected));
  drawTabs();
  return Object.assign(c, {
    addTab(tab: Tab) {
      tabs.push(tab);
      drawTabs();
    },
  });
}

/** Sources | Channels | UTM (a select picks source, medium, campaign, term or content). */
export function sourcesCard(ctx: () => Ctx): Card {
  const utm: [string, string][] = [['utmSource', 'UTM source'], ['utmMedium', 'UTM medium'], ['utmCampaign', 'UTM campaign'], ['utmTerm', 'UTM term'], ['utmContent', 'UTM content']];
  let utmIndex = 0;
  const utmTab: Tab = { label: 'UTM', spec: { label: utm[0]![1], column: utm[0]![1], dimension: utm[0]![0], metrics: VISITORS } };
  utmTab.render = async (c) => {
    const select = h('select', { id: uid('utm') }, utm.map(([, label], i) => h('option', { value: String(i), selected: i === utmIndex }, label)));
    const rows = h('div', null, rowsTable(c, utmTab.spec!, await topRows(c, utmTab.spec!)));
    select.addEventListener('change', async () => {
      utmIndex = Number(select.value);
      const [dimension, label] = utm[utmIndex]!;
      utmTab.spec = { label, column: label, dimension, metrics: VISITORS };
      replace(rows, rowsTable(c, utmTab.spec, await topRows(c, utmTab.spec)));
    });
    return [field('UTM parameter', select), rows];
  };
  return tabbedCard('Top sources', [
    list('Sources', 'Source', 'source', PV_V, { top: fixed('referrers', 'referrer', (r) => sourceName(String(r.referrer))), display: sourceName }),
    list('Channels', 'Channel', 'channel'),
    utmTab,
  ], ctx);
}

/** Pages | Entry pages | Exit pages, and Hostnames when the project has seen more than one. */
export function pagesCard(ctx: () => Ctx): Card {
  const c = tabbedCard('Top pages', [
    list('Pages', 'Page', 'page', PV_V, { top: fixed('pages', 'path') }),
    list('Entry pages', 'Entry page', 'entryPage'),
    list('Exit pages', 'Exit page', 'exitPage'),
  ], ctx);
  const { source, view } = ctx();
  source.report<{ data: unknown[] }>('breakdown', { ...apiParams({ ...view, filters: [], compare: undefined }), dimension: 'hostname', limit: 2 }).then(
    ({ data }) => data.length > 1 && c.addTab(list('Hostnames', 'Hostname', 'hostname')),
    () => undefined,
  );
  return c;
}

/** Countries | Regions | Cities. */
export function locationsCard(ctx: () => Ctx): Card {
  return tabbedCard('Locations', [
    list('Countries', 'Country', 'country', PV_V, {
      top: fixed('countries', 'country_code', (r) => withFlag(String(r.country_code), String(r.country))),
      display: (code) => withFlag(code, countryName(code)),
    }),
    list('Regions', 'Region', 'region'),
    list('Cities', 'City', 'city', V_PV, { top: fixed('cities', 'city', (r) => withFlag(String(r.country_code), `${r.city}, ${r.country}`)) }),
  ], ctx);
}

/** Devices | Browsers | OS, by visitors. */
export function devicesCard(ctx: () => Ctx): Card {
  return tabbedCard('Devices', [list('Devices', 'Device', 'device'), list('Browsers', 'Browser', 'browser'), list('OS', 'Operating system', 'os')], ctx);
}

/**
 * Events | Properties. The property tab breaks one event's custom property down
 * (breakdown?dimension=prop:<key>&filters=event==<name>); there is no list of property keys, so
 * the key is typed.
 */
export function eventsCard(ctx: () => Ctx): Card {
  const EVENTS = [{ key: 'visitors', label: 'Visitors' }, { key: 'events', label: 'Events' }];
  const events = list('Events', 'Event', 'event', EVENTS);
  let chosen = { event: '', key: '' };
  const props: Tab = { label: 'Properties' };
  props.render = async (c) => {
    const names = (await breakdownRows(c, events.spec!, 20)).map((r) => r.value);
    if (!names.length) return h('p', { class: 'empty' }, 'No events in this period.');
    if (!names.includes(chosen.event)) chosen = { ...chosen, event: names[0]! };
    const event = h('select', { id: uid('ev') }, names.map((n) => h('option', { value: n, selected: n === chosen.event }, n)));
    const key = h('input', { type: 'text', id: uid('key'), value: chosen.key, autocomplete: 'off', required: true });
    const out = h('div');
    const show = async () => {
      const spec: ListSpec = { label: `${chosen.event}: ${chosen.key}`, column: chosen.key, dimension: `prop:${chosen.key}`, metrics: EVENTS, extra: [{ dimension: 'event', op: 'is', values: [chosen.event] }] };
      replace(out, rowsTable(c, spec, await breakdownRows(c, spec, 10)), h('button', { type: 'button', class: 'secondary small', onclick: () => openDetails(c, spec) }, `Details: ${spec.label}`));
    };
    const form = h(
      'form',
      { class: 'prop-form', onsubmit: (e: Event) => { e.preventDefault(); chosen = { event: event.value, key: key.value.trim() }; if (chosen.key) void show(); } },
      field('Event', event),
      field('Property', key),
      h('button', { type: 'submit', class: 'small' }, 'Show property'),
    );
    if (chosen.key) await show();
    return [form, out];
  };
  return tabbedCard('Events', [events, props], ctx);
}
