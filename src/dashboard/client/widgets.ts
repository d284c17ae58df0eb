import { h, replace, type Child } from './dom.js';
import { fmtNumber } from './format.js';

/**
 * A titled card whose body is loaded asynchronously: "Loading…", then the content, an empty
 * state, or the error with a Retry button (never a blank card).
 */
export function card(title: string, load: () => Promise<Child>, opts: { wide?: boolean; note?: string } = {}): HTMLElement {
  const body = h('div', { class: 'card-body', 'aria-busy': 'true' });
  const heading = h('h2', null, title);
  const el = h('section', { class: `card${opts.wide ? ' wide' : ''}`, 'aria-label': title }, h('div', { class: 'card-head' }, heading, opts.note ? h('span', { class: 'note' }, opts.note) : null), body);
  const run = () => {
    replace(body, h('p', { class: 'loading' }, 'Loading…'));
    body.setAttribute('aria-busy', 'true');
    load().then(
      (content) => {
        body.setAttribute('aria-busy', 'false');
        replace(body, content ?? empty());
      },
      (err: Error) => {
        body.setAttribute('aria-busy', 'false');
        replace(body, h('div', { class: 'error-box', role: 'alert' }, h('p', null, `Could not load ${title.toLowerCase()}: ${err.message}`), h('button', { type: 'button', class: 'secondary', onclick: run }, 'Retry')));
      },
    );
  };
  run();
  return el;
}

/** The empty state of a card. */
export const empty = (text = 'No data for this period yet.') => h('p', { class: 'empty' }, text);

/** One column of a ranked table: header, cell, and whether it is numeric (right-aligned). */
export interface Column<R> {
  label: string;
  cell: (row: R) => Child;
  numeric?: boolean;
}

/**
 * A ranked table; each row's first cell carries a bar proportional to `metric` so the ranking
 * reads at a glance. Returns the empty state when there are no rows.
 */
export function barTable<R>(rows: R[], columns: Column<R>[], metric: (row: R) => number, caption: string): HTMLElement {
  if (rows.length === 0) return empty();
  const max = Math.max(1, ...rows.map(metric));
  return h(
    'table',
    { class: 'ranked' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : undefined }, c.label)))),
    h(
      'tbody',
      null,
      rows.map((row) =>
        h(
          'tr',
          null,
          columns.map((c, i) =>
            i === 0
              ? h('td', { class: 'bar-cell' }, h('span', { class: 'bar', style: `width:${((metric(row) / max) * 100).toFixed(1)}%` }), h('span', { class: 'bar-label' }, c.cell(row)))
              : h('td', { class: c.numeric ? 'num' : undefined }, c.cell(row)),
          ),
        ),
      ),
    ),
  );
}

/** A numeric cell. */
export const n = (value: number) => fmtNumber(value);

/** A simple two-level tab list (e.g. Devices / Browsers / OS) with arrow-key support. */
export function tabs(items: { label: string; render: () => Child }[]): HTMLElement {
  const panel = h('div', { role: 'tabpanel' });
  const buttons = items.map((item, i) =>
    h('button', { type: 'button', role: 'tab', 'aria-selected': String(i === 0), tabindex: i === 0 ? '0' : '-1', onclick: () => select(i) }, item.label),
  );
  const list = h('div', { role: 'tablist', class: 'tabs' }, buttons);
  list.addEventListener('keydown', (e) => {
    const current = buttons.findIndex((b) => b.getAttribute('aria-selected') === 'true');
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const next = (current + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length;
      select(next);
      buttons[next].focus();
    }
  });
  function select(i: number) {
    buttons.forEach((b, j) => {
      b.setAttribute('aria-selected', String(i === j));
      b.tabIndex = i === j ? 0 : -1;
      if (!b.id) b.id = `tab-${Math.random().toString(36).slice(2, 8)}`;
    });
    panel.setAttribute('aria-labelledby', buttons[i].id);
    replace(panel, items[i].render());
  }
  select(0);
  return h('div', null, list, panel);
}
