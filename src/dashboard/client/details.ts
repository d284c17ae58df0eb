/**
 * The full list behind a card ("Details"): GET breakdown a page at a time ("Load more"),
 * searchable server-side (a `~=` contains filter on the list's dimension), with a CSV download of
 * exactly the rows shown. A modal dialog: focus stays inside, Esc closes.
 */
import { saveCsv, toCsv } from './csv.js';
import { h, replace, uid } from './dom.js';
import { fmtNumber } from './format.js';
import { breakdownRows, rowsTable, type ListSpec, type Row } from './lists.js';
import type { Ctx } from './source.js';
import type { Filter } from './view.js';

const PAGE = 100;

export function openDetails(ctx: Ctx, spec: ListSpec): void {
  const titleId = uid('details');
  const rows: Row[] = [];
  let search = '';
  let generation = 0;
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const list = h('div', { class: 'details-list' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => void load(false) }, 'Load more');
  const input = h('input', { type: 'search', id: uid('search'), autocomplete: 'off', placeholder: `Contains…` });
  const csv = h('button', { type: 'button', class: 'secondary', onclick: () => download() }, 'Download CSV');
  const close = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Close');
  const dialog = h(
    'dialog',
    { class: 'drawer details', 'aria-labelledby': titleId },
    h('div', { class: 'drawer-head' }, h('h2', { id: titleId }, spec.label), close),
    h('div', { class: 'details-tools' }, h('div', { class: 'field' }, h('label', { for: input.id }, `Search ${spec.column.toLowerCase()}`), input), csv),
    status,
    list,
    more,
  );

  async function load(fresh: boolean) {
    const mine = fresh ? ++generation : generation;
    if (fresh) rows.length = 0;
    more.disabled = true;
    status.textContent = 'Loading…';
    const narrow: Filter[] = search ? [{ dimension: spec.dimension, op: 'contains', values: [search] }] : [];
    try {
      const page = await breakdownRows(ctx, spec, PAGE, rows.length, narrow);
      if (mine !== generation) return;
      rows.push(...page);
      replace(list, rowsTable(ctx, spec, rows, () => dialog.close()));
      more.hidden = page.length < PAGE;
      status.textContent = `${fmtNumber(rows.length)} ${rows.length === 1 ? 'row' : 'rows'} shown${search ? ` containing “${search}”` : ''}.`;
    } catch (err) {
      if (mine === generation) status.textContent = `Could not load the list: ${(err as Error).message}`;
    } finally {
      more.disabled = false;
    }
  }

  function download() {
    const keys = spec.metrics.map((m) => m.key);
    const compared = !!ctx.view.compare;
    const header = [spec.dimension, ...keys, ...(compared ? keys.map((k) => `comparison_${k}`) : [])];
    const body = rows.map((r) => [r.value, ...keys.map((k) => r.metrics[k] ?? null), ...(compared ? keys.map((k) => r.comparison?.[k] ?? null) : [])]);
    saveCsv(`sightline-${ctx.source.domain}-${spec.dimension.replace(/[^\w-]+/g, '_')}.csv`, toCsv(header, body));
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      search = input.value.trim();
      void load(true);
    }, 250);
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  input.focus();
  void load(true);
}
