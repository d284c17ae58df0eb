import { h, replace, type Child } from './dom.js';
import { fmtNumber } from './format.js';

/** A card element that can load its body again (when the view changes). */
export type Card = HTMLElement & { reload(): void };

/**
 * A titled card whose body is loaded asynchronously: "Loading…", then the content, an empty
 * state, or the error with a Retry button (never a blank card). `reload` loads it again and keeps
 * the old content on screen (marked busy) until the new one arrives, so the page does not jump;
 * an answer that arrives after a newer reload is dropped. `head` adds controls beside the title
 * (tabs), `foot` below the body (details).
 */
export function card(title: string, load: () => Promise<Child>, opts: { wide?: boolean; note?: () => string | undefined; head?: Child; foot?: Child; bodyAttrs?: Record<string, string> } = {}): Card {
  const body = h('div', { class: 'card-body', 'aria-busy': 'true', ...opts.bodyAttrs });
  const heading = h('h2', null, title);
  const note = h('span', { class: 'note' });
  const el = h('section', { class: `card${opts.wide ? ' wide' : ''}`, 'aria-label': title }, h('div', { class: 'card-head' }, heading, note, opts.head), body, opts.foot) as Card;
  let generation = 0;
  const run = () => {
    const mine = ++generation;
    note.textContent = opts.note?.() ?? '';
    if (!body.firstChild || body.querySelector('.error-box')) replace(body, h('p', { class: 'loading' }, 'Loading…'));
    body.setAttribute('aria-busy', 'true');
    body.classList.add('busy');
    load().then(
      (content) => {
        if (mine !== generation) return;
        body.setAttribute('aria-busy', 'false');
        body.classList.remove('busy');
        replace(body, content ?? empty());
      },
      (err: Error) => {
        if (mine !== generation) return;
        body.setAttribute('aria-busy', 'false');
        body.classList.remove('busy');
        replace(body, h('div', { class: 'error-box', role: 'alert' }, h('p', null, `Could not load ${title.toLowerCase()}: ${err.message}`), h('button', { type: 'button', class: 'secondary', onclick: run }, 'Retry')));
      },
    );
  };
  el.reload = run;
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

/**
 * A tab list (ARIA tabs pattern: arrow keys move between tabs, one tab in the tab order) for a
 * card whose body is the tab panel. Calls `onSelect` with the chosen index.
 */
export function tabList(labels: string[], panel: HTMLElement, label: string, onSelect: (i: number) => void, selected = 0): HTMLElement {
  const base = `tab-${Math.random().toString(36).slice(2, 8)}`;
  panel.id = `${base}-panel`;
  panel.setAttribute('role', 'tabpanel');
  const buttons = labels.map((text, i) => h('button', { type: 'button', role: 'tab', id: `${base}-${i}`, 'aria-controls': panel.id, onclick: () => select(i, true) }, text));
  const list = h('div', { role: 'tablist', class: 'tabs', 'aria-label': label }, buttons);
  list.addEventListener('keydown', (e) => {
    const current = buttons.findIndex((b) => b.getAttribute('aria-selected') === 'true');
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const next = (current + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length;
      select(next, true);
      buttons[next]!.focus();
    }
  });
  function select(i: number, notify: boolean) {
    buttons.forEach((b, j) => {
      b.setAttribute('aria-selected', String(i === j));
      b.tabIndex = i === j ? 0 : -1;
    });
    panel.setAttribute('aria-labelledby', buttons[i]!.id);
    if (notify) onSelect(i);
  }
  select(selected, false);
  return list;
}
