import type { ReportSource } from './source.js';
import { h, replace, uid } from './dom.js';
import { flag, fmtDate, fmtDuration, fmtMoney, fmtNumber } from './format.js';

type ProfileEvent = { ts: string; kind: string; path: string; name: string | null; amountCents: number | null; currency: string | null };
type Profile = {
  visitorId: string; firstSeen: string; lastSeen: string; pageviews: number; events: number; country: string | null; country_code: string | null;
  city: string | null; device: string | null; browser: string | null; os: string | null; referrer: string | null; sessionCount: number; totalDurationSeconds: number;
  sessions: { sessionId: string; start: string; pageviews: number; entryPath: string | null; exitPath: string | null; referrer: string | null; events: ProfileEvent[] }[];
};

/** Opens the visitor profile in a side drawer (a modal dialog: focus is trapped, Esc closes). */
export function openVisitor(source: ReportSource, visitorId: string, period: string): void {
  const titleId = uid('visitor');
  const body = h('div', { class: 'drawer-body' }, h('p', { class: 'loading' }, 'Loading visitor…'));
  const close = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Close');
  const dialog = h('dialog', { class: 'drawer', 'aria-labelledby': titleId }, h('div', { class: 'drawer-head' }, h('h2', { id: titleId }, 'Visitor profile'), close), body);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  close.focus();
  source.report<Profile>(`visitors/${encodeURIComponent(visitorId)}`, { period }).then(
    (p) => {
      const where = [p.city, p.country].filter(Boolean).join(', ') || 'Unknown location';
      replace(
        body,
        h('p', { class: 'visitor-where' }, h('span', { class: 'flag', 'aria-hidden': 'true' }, flag(p.country_code)), ` ${where}`),
        h('dl', { class: 'mini-stats' },
          [['Browser', p.browser ?? 'Unknown'], ['OS', p.os ?? 'Unknown'], ['Device', p.device ?? 'Unknown'], ['Pageviews', fmtNumber(p.pageviews)], ['Events', fmtNumber(p.events)], ['Sessions', fmtNumber(p.sessionCount)], ['Time on site', fmtDuration(p.totalDurationSeconds)], ['First seen', fmtDate(p.firstSeen)], ['Last seen', fmtDate(p.lastSeen)]].map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v))),
        ),
        h('h3', null, 'Sessions'),
        h('ol', { class: 'sessions' }, p.sessions.map((s) =>
          h('li', null,
            h('p', null, h('strong', null, fmtDate(s.start)), ` · ${fmtNumber(s.pageviews)} pageviews · from ${s.referrer ?? 'direct'}`),
            h('ul', null, s.events.map((e) => h('li', null, `${new Date(e.ts).toLocaleTimeString('en-GB')} `, e.kind === 'pageview' ? `Viewed ${e.path}` : `${e.name ?? e.kind} on ${e.path}${e.amountCents !== null ? ` (${fmtMoney(e.amountCents, e.currency)})` : ''}`))),
          ),
        )),
      );
    },
    (err: Error) => replace(body, h('p', { class: 'error-box', role: 'alert' }, `Could not load this visitor: ${err.message}`)),
  );
}
