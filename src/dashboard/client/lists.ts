/**
 * Ranked lists: the rows of a card tab or of a details dialog, read from a fixed report or from
 * `GET breakdown`. Each row's name is a button that adds "dimension is value" to the filters; with
 * a comparison each row shows its change against the compared period (served by `compare=`).
 */
import { h, type Child } from './dom.js';
import { change, fmtNumber, fmtPercent } from './format.js';
import type { Ctx } from './source.js';
import { apiParams, withFilter, type Filter } from './view.js';
import { empty } from './widgets.js';

export interface Metric {
  key: string;
  label: string;
}

/** One row: the dimension value, how to show it, its metrics and, with compare, the compared ones. */
export interface Row {
  value: string;
  display?: Child;
  metrics: Record<string, number | null>;
  comparison?: Record<string, number | null>;
}

/** A list: what it breaks down, its columns, and where its top rows come from. */
export interface ListSpec {
  /** Tab label and details title. */
  label: string;
  /** Header of the first column. */
  column: string;
  /** The filter (and breakdown) dimension of the rows. */
  dimension: string;
  /** Columns; the first ranks the rows (and bars them). */
  metrics: Metric[];
  /** Filters the list always adds (event==name for a property list); a clicked row adds them too. */
  extra?: Filter[];
  /** The top rows from a fixed report (its fast path); without it, GET breakdown. */
  top?: (ctx: Ctx) => Promise<Row[]>;
  display?: (value: string) => Child;
}

/** `limit` rows of `spec` from GET breakdown starting at `offset`, narrowed by `more` filters (a search). */
export async function breakdownRows(ctx: Ctx, spec: ListSpec, limit: number, offset = 0, more: Filter[] = []): Promise<Row[]> {
  const params = { ...apiParams(ctx.view, [...(spec.extra ?? []), ...more]), dimension: spec.dimension, metrics: spec.metrics.map((m) => m.key).join(','), limit, offset };
  const answer = await ctx.source.report<{ data: (Record<string, string | number | null> & { comparison?: Record<string, number | null> })[] }>('breakdown', params);
  return answer.data.map((d) => ({
    value: String(d[spec.dimension] ?? ''),
    metrics: Object.fromEntries(spec.metrics.map((m) => [m.key, d[m.key] as number | null])),
    comparison: d.comparison,
  }));
}

/** The card's top 10 of a list. */
export const topRows = (ctx: Ctx, spec: ListSpec) => (spec.top ? spec.top(ctx) : breakdownRows(ctx, spec, 10));

/** "+12%", "−5%", "new" or "0%": the change of `now` against `before`. */
export function changeText(now: number | null, before: number | null | undefined): string {
  if (now === null || before === null || before === undefined) return '—';
  const c = change(now, before);
  if (c === null) return 'new';
  return `${c > 0 ? '+' : c < 0 ? '−' : ''}${fmtPercent(Math.abs(c))}`;
}

export function changeClass(now: number | null, before: number | null | undefined, lowerIsBetter = false): string {
  if (now === null || before === null || before === undefined || now === before) return 'change';
  return `change ${(now > before) !== lowerIsBetter ? 'up' : 'down'}`;
}

const cellValue = (v: number | null) => (v === null ? '—' : fmtNumber(v));

/** The view with `row` of `spec` as a filter (plus the list's own extra filters). */
export function filterFor(ctx: Ctx, spec: ListSpec, row: Row) {
  let next = ctx.view;
  for (const f of spec.extra ?? []) next = withFilter(next, f);
  return withFilter(next, { dimension: spec.dimension, op: 'is', values: [row.value] });
}

/**
 * The table of `rows`: the first cell a bar proportional to the ranking metric and a button
 * that filters by the row; `onPick` runs before navigating (a dialog closes itself).
 */
export function rowsTable(ctx: Ctx, spec: ListSpec, rows: Row[], onPick?: () => void): HTMLElement {
  if (rows.length === 0) return empty();
  const rank = spec.metrics[0]!.key;
  const max = Math.max(1, ...rows.map((r) => r.metrics[rank] ?? 0));
  const compare = !!ctx.view.compare;
  return h(
    'table',
    { class: 'ranked' },
    h('caption', { class: 'sr-only' }, spec.label),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, spec.column), spec.metrics.map((m) => h('th', { scope: 'col', class: 'num' }, m.label)), compare ? h('th', { scope: 'col', class: 'num' }, 'Change') : null)),
    h(
      'tbody',
      null,
      rows.map((row) => {
        const label = row.display ?? spec.display?.(row.value) ?? row.value;
        const pick = h('button', { type: 'button', class: 'row-filter', title: `Show only ${spec.column.toLowerCase()} ${row.value}`, onclick: () => { onPick?.(); ctx.navigate(filterFor(ctx, spec, row)); } }, label);
        return h(
          'tr',
          null,
          h('td', { class: 'bar-cell' }, h('span', { class: 'bar', style: `width:${(((row.metrics[rank] ?? 0) / max) * 100).toFixed(1)}%` }), h('span', { class: 'bar-label' }, pick)),
          spec.metrics.map((m) => h('td', { class: 'num' }, cellValue(row.metrics[m.key] ?? null))),
          compare ? h('td', { class: `num ${changeClass(row.metrics[rank] ?? null, row.comparison?.[rank])}` }, changeText(row.metrics[rank] ?? null, row.comparison?.[rank])) : null,
        );
      }),
    ),
  );
}
