/**
 * The dashboard's controls: period (presets, custom range with two labelled date fields in the
 * project's zone, all time), comparison, the filter menu and the filter chips, and the keyboard
 * shortcuts for common periods. Each control moves to a new view through `ctx.navigate`, i.e. a
 * new URL (history entry).
 */
import { DIMENSIONS, dimensionLabel, OP_LABELS } from './dimensions.js';
import { field, h, uid } from './dom.js';
import { PERIODS, periodLabel } from './format.js';
import type { Ctx } from './source.js';
import { todayIn, withFilter, withoutFilter, type Compare, type FilterOp, type RangePeriod, type View } from './view.js';

/** Keys of the period shortcuts (Plausible's letters): t today, w 7 days, m 30 days, y 12 months, a all time. */
export const SHORTCUTS: Record<string, RangePeriod> = { t: 'today', w: '7d', m: '30d', y: '12m', a: 'all' };

const presetView = (view: View, period: RangePeriod): View => ({ period, filters: view.filters, ...(view.compare ? { compare: view.compare } : {}) });

/** Period select (with "Custom range…" opening the date fields) and the custom range form. */
export function periodControl(ctx: Ctx): HTMLElement {
  const { view } = ctx;
  const today = todayIn(ctx.source.timeZone);
  const from = h('input', { type: 'date', id: 'range-from', max: today, value: view.from ?? '', required: true });
  const to = h('input', { type: 'date', id: 'range-to', max: today, value: view.to ?? today, required: true });
  const error = h('p', { class: 'status error', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'custom-range',
      'aria-label': 'Custom range',
      hidden: view.period !== 'custom',
      onsubmit: (e: Event) => {
        e.preventDefault();
        if (!from.value || !to.value) return void (error.textContent = 'Pick both dates.');
        if (from.value > to.value) return void (error.textContent = 'The start date must not be after the end date.');
        ctx.navigate({ ...presetView(view, 'custom'), from: from.value, to: to.value });
      },
    },
    field('From', from),
    field('To', to),
    h('button', { type: 'submit', id: 'apply-range' }, 'Apply range'),
    h('small', { class: 'hint' }, `Dates in the project’s time zone (${ctx.source.timeZone}).`),
    error,
  );
  const select = h(
    'select',
    {
      id: 'period',
      onchange: (e: Event) => {
        const value = (e.target as HTMLSelectElement).value as RangePeriod;
        if (value === 'custom') {
          form.hidden = false;
          from.focus();
        } else ctx.navigate(presetView(view, value));
      },
    },
    [...PERIODS.map(([k]) => k), 'all', 'custom'].map((k) => h('option', { value: k, selected: k === view.period }, k === 'custom' ? 'Custom range…' : periodLabel(k))),
  );
  const current = view.period === 'custom' ? h('span', { class: 'muted range-text' }, `${view.from} – ${view.to}`) : null;
  return h('div', { class: 'period-control' }, h('div', { class: 'inline-field' }, h('label', { for: 'period' }, 'Period'), select, current), form);
}

/** Comparison select: none, previous period, same period last year. */
export function compareControl(ctx: Ctx): HTMLElement {
  const options: [string, string][] = [['', 'No comparison'], ['previous_period', 'Previous period'], ['year_over_year', 'Same period last year']];
  const select = h(
    'select',
    {
      id: 'compare',
      onchange: (e: Event) => {
        const value = (e.target as HTMLSelectElement).value as Compare | '';
        const { compare: _drop, ...rest } = ctx.view;
        ctx.navigate(value ? { ...rest, compare: value } : rest);
      },
    },
    options.map(([k, label]) => h('option', { value: k, selected: (ctx.view.compare ?? '') === k }, label)),
  );
  return h('div', { class: 'inline-field' }, h('label', { for: 'compare' }, 'Compare with'), select);
}

/** The filter menu: a dialog adding any dimension with is / is not / contains. */
export function filterButton(ctx: Ctx): HTMLElement {
  return h('button', { type: 'button', class: 'secondary', onclick: () => openFilterMenu(ctx) }, 'Add filter');
}

function openFilterMenu(ctx: Ctx): void {
  const titleId = uid('filter');
  const dimension = h('select', { id: uid('dim') }, DIMENSIONS.map(([k, label]) => h('option', { value: k }, label)), h('option', { value: 'prop' }, 'Custom property…'));
  const prop = h('input', { type: 'text', id: uid('prop'), autocomplete: 'off' });
  const propField = field('Property key', prop);
  propField.hidden = true;
  const op = h('select', { id: uid('op') }, (Object.keys(OP_LABELS) as FilterOp[]).map((k) => h('option', { value: k }, OP_LABELS[k])));
  const value = h('input', { type: 'text', id: uid('value'), autocomplete: 'off', required: true });
  const error = h('p', { class: 'status error', role: 'alert' });
  dimension.addEventListener('change', () => (propField.hidden = dimension.value !== 'prop'));
  const dialog = h(
    'dialog',
    { class: 'modal', 'aria-labelledby': titleId },
    h(
      'form',
      {
        onsubmit: (e: Event) => {
          e.preventDefault();
          const dim = dimension.value === 'prop' ? `prop:${prop.value.trim()}` : dimension.value;
          if (dim === 'prop:') return void (error.textContent = 'Name the property.');
          // "a|b" in the field means either value, as in the API's grammar.
          const values = value.value.split('|').map((s) => s.trim()).filter(Boolean);
          if (!values.length) return void (error.textContent = 'Enter a value.');
          dialog.close();
          ctx.navigate(withFilter(ctx.view, { dimension: dim, op: op.value as FilterOp, values }));
        },
      },
      h('h2', { id: titleId }, 'Add a filter'),
      field('Dimension', dimension),
      propField,
      field('Operator', op),
      field('Value', value, 'Separate several values with |'),
      error,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'), h('button', { type: 'submit' }, 'Apply filter')),
    ),
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  dimension.focus();
}

/** The active filters as removable chips ("Source is google ×"), and "Clear all" with two or more. */
export function filterChips(ctx: Ctx): HTMLElement | null {
  const { filters } = ctx.view;
  if (!filters.length) return null;
  return h(
    'ul',
    { class: 'chips', 'aria-label': 'Active filters' },
    filters.map((f, i) => {
      const text = `${dimensionLabel(f.dimension)} ${OP_LABELS[f.op]} ${f.values.join(' or ')}`;
      return h('li', { class: 'chip' }, h('span', null, text), h('button', { type: 'button', class: 'chip-remove', 'aria-label': `Remove filter ${text}`, onclick: () => ctx.navigate(withoutFilter(ctx.view, i)) }, '×'));
    }),
    filters.length > 1 ? h('li', null, h('button', { type: 'button', class: 'link-like', onclick: () => ctx.navigate({ ...ctx.view, filters: [] }) }, 'Clear all filters')) : null,
  );
}

/** Whether a key press belongs to the user typing somewhere (shortcuts stay out of the way then). */
function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName) || !!t.closest('dialog'));
}

let shortcutCtx: (() => Ctx) | null = null;
let listening = false;

/** Turns the period shortcuts on for the dashboard `ctx` returns (null: off, e.g. another page). */
export function periodShortcuts(get: (() => Ctx) | null): void {
  shortcutCtx = get;
  if (listening) return;
  listening = true;
  document.addEventListener('keydown', (e) => {
    if (!shortcutCtx || e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    const period = SHORTCUTS[e.key.toLowerCase()];
    if (!period) return;
    const ctx = shortcutCtx();
    if (ctx.view.period === period) return;
    e.preventDefault();
    ctx.navigate(presetView(ctx.view, period));
  });
}
