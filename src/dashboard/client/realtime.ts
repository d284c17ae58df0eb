/**
 * Realtime: "N current visitors" from GET realtime (unique visitors with an event in the last 5
 * minutes), refreshed every 30 seconds while the element is on the page, and a "Now" card with the
 * pages and sources of those minutes.
 */
import { h, replace } from './dom.js';
import { fmtNumber } from './format.js';
import type { ReportSource } from './source.js';
import { empty } from './widgets.js';

export const REALTIME_REFRESH_MS = 30_000;

interface Realtime {
  visitors: number;
  pages: { path: string; visitors: number }[];
  sources: { source: string; visitors: number }[];
}

/** The live count (polite live region) and the "now" lists, kept fresh until `live` leaves the document. */
export function realtimeView(source: ReportSource): { live: HTMLElement; now: HTMLElement } {
  const live = h('p', { class: 'realtime', role: 'status' }, 'Counting current visitors…');
  const now = h('div', { class: 'now-lists' }, h('p', { class: 'loading' }, 'Loading…'));
  const list = (title: string, rows: { name: string; visitors: number }[]) =>
    h('div', null, h('h3', null, title), rows.length ? h('ol', { class: 'now-list' }, rows.map((r) => h('li', null, h('span', null, r.name), h('span', { class: 'num' }, fmtNumber(r.visitors))))) : empty('Nobody right now.'));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = async () => {
    if (timer !== undefined && !live.isConnected) return;
    try {
      const r = await source.report<Realtime>('realtime');
      const text = `${fmtNumber(r.visitors)} current ${r.visitors === 1 ? 'visitor' : 'visitors'}`;
      // Rewritten only when it changes: a status region re-announces whatever is written to it.
      if (live.textContent !== text) replace(live, h('span', { class: 'pulse', 'aria-hidden': 'true' }), text);
      replace(now, list('Pages', r.pages.map((p) => ({ name: p.path, visitors: p.visitors }))), list('Sources', r.sources.map((s) => ({ name: s.source === '(direct)' ? 'Direct / none' : s.source, visitors: s.visitors }))));
    } catch {
      replace(live, 'Realtime count unavailable');
    }
    timer = setTimeout(() => void tick(), REALTIME_REFRESH_MS);
  };
  void tick();
  return { live, now };
}
