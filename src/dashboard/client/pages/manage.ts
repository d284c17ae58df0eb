import { api, download, projectPath } from '../api.js';
import { confirmDialog, field, h, replace, statusLine, submitWith, type Child } from '../dom.js';
import { fmtDate, PERIODS } from '../format.js';
import { empty } from '../widgets.js';
import type { ProjectDetail } from './settings.js';

/** A panel that lists records (reloaded after each change) above a form that adds one. */
function listPanel(title: string, intro: string, load: () => Promise<Child>, form: (reload: () => Promise<void>, status: ReturnType<typeof statusLine>) => HTMLElement): HTMLElement {
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  const status = statusLine();
  const reload = async () => {
    try {
      replace(list, await load());
    } catch (err) {
      replace(list, h('p', { class: 'error-box', role: 'alert' }, (err as Error).message));
    }
  };
  void reload();
  return h('section', { class: 'panel' }, h('h2', null, title), h('p', { class: 'muted' }, intro), list, form(reload, status), status.el);
}

/** A Remove button that confirms, calls `remove`, then reloads. */
function removeButton(label: string, what: string, remove: () => Promise<unknown>, reload: () => Promise<void>, status: ReturnType<typeof statusLine>): HTMLElement {
  return h('button', {
    type: 'button',
    class: 'danger small',
    'aria-label': `${label} ${what}`,
    onclick: async () => {
      if (!(await confirmDialog({ title: `${label} ${what}?`, message: 'This takes effect at once.', confirmLabel: label }))) return;
      try {
        await remove();
        status.ok(`${what} removed.`);
        await reload();
      } catch (err) {
        status.error((err as Error).message);
      }
    },
  }, label);
}

/** Members: the owner adds (admin or member) and removes people by email. */
export function membersPage(p: ProjectDetail): HTMLElement[] {
  if (!p.isOwner) return [h('p', { class: 'panel' }, 'Only the owner of this project manages its members.')];
  const path = projectPath(p.domain, '/members');
  type Member = { email: string; name: string; role: string };
  let reloadRef: () => Promise<void> = async () => {};
  let statusRef: ReturnType<typeof statusLine>;
  const load = async () => {
    const { members } = await api<{ members: Member[] }>('GET', path);
    return h('ul', { class: 'rows' }, members.map((m) => h('li', null, h('span', null, h('strong', null, m.email), m.name ? ` (${m.name})` : ''), h('span', { class: 'role' }, m.role), m.role === 'owner' ? null : removeButton('Remove', m.email, () => api('DELETE', path, { email: m.email }), reloadRef, statusRef))));
  };
  return [
    listPanel('Members', 'Admins can see reports and manage goals, funnels and exports; members can see reports.', load, (reload, status) => {
      reloadRef = reload;
      statusRef = status;
      const email = h('input', { type: 'email', required: true, autocomplete: 'off' });
      const role = h('select', null, h('option', { value: 'member' }, 'Member'), h('option', { value: 'admin' }, 'Admin'));
      return h('form', { class: 'inline-form', onsubmit: submitWith(status, async () => {
        await api('POST', path, { email: email.value, role: role.value });
        status.ok(`${email.value} added.`);
        email.value = '';
        await reload();
      }) }, field('Email of an existing account', email), field('Role', role), h('button', { type: 'submit' }, 'Add member'));
    }),
  ];
}

type GoalRow = { id: string; name: string; type: string; value: string; target: number | null };
type FunnelRow = { id: string; name: string; steps: { type: string; value: string }[] };

function goalsPanel(p: ProjectDetail): HTMLElement {
  let reloadRef: () => Promise<void> = async () => {};
  let statusRef: ReturnType<typeof statusLine>;
  const load = async () => {
    const { goals } = await api<{ goals: GoalRow[] }>('GET', projectPath(p.domain, '/goals?period=30d'));
    if (goals.length === 0) return empty('No goals yet.');
    return h('ul', { class: 'rows' }, goals.map((g) => h('li', null, h('span', null, h('strong', null, g.name), ` · ${g.type}${g.value ? ` “${g.value}”` : ''}${g.target !== null ? ` · target ${g.target}` : ''}`), removeButton('Delete', `goal ${g.name}`, () => api('DELETE', projectPath(p.domain, `/goals/${encodeURIComponent(g.id)}`)), reloadRef, statusRef))));
  };
  return listPanel('Goals', 'Event: an event name. Pageview: a path (* matches anything). Revenue: a transaction name. Traffic: a referrer source (empty for all). Engagement: average visit duration.', load, (reload, status) => {
    reloadRef = reload;
    statusRef = status;
    const name = h('input', { type: 'text', required: true, maxlength: '80' });
    const type = h('select', null, ['event', 'pageview', 'revenue', 'traffic', 'engagement'].map((t) => h('option', { value: t }, t)));
    const value = h('input', { type: 'text', maxlength: '500' });
    const target = h('input', { type: 'number', min: '0', step: 'any' });
    return h('form', { class: 'inline-form', onsubmit: submitWith(status, async () => {
      await api('POST', projectPath(p.domain, '/goals'), { name: name.value, type: type.value, value: value.value, target: target.value === '' ? null : Number(target.value) });
      status.ok(`Goal ${name.value} added.`);
      name.value = value.value = target.value = '';
      await reload();
    }) }, field('Goal name', name), field('Type', type), field('Value', value), field('Target (optional)', target), h('button', { type: 'submit' }, 'Add goal'));
  });
}

function stepRow(index: number): HTMLElement {
  const type = h('select', { 'aria-label': `Step ${index} type` }, h('option', { value: 'pageview' }, 'Page'), h('option', { value: 'event' }, 'Event'));
  const value = h('input', { type: 'text', required: true, 'aria-label': `Step ${index} value`, placeholder: index === 1 ? '/pricing' : 'Signup' });
  return h('div', { class: 'step-row' }, h('span', { class: 'step-no' }, `${index}.`), type, value);
}

function funnelsPanel(p: ProjectDetail): HTMLElement {
  let reloadRef: () => Promise<void> = async () => {};
  let statusRef: ReturnType<typeof statusLine>;
  const load = async () => {
    const { funnels } = await api<{ funnels: FunnelRow[] }>('GET', projectPath(p.domain, '/funnels'));
    if (funnels.length === 0) return empty('No funnels yet.');
    return h('ul', { class: 'rows' }, funnels.map((f) => h('li', null, h('span', null, h('strong', null, f.name), ` · ${f.steps.map((s) => s.value).join(' → ')}`), removeButton('Delete', `funnel ${f.name}`, () => api('DELETE', projectPath(p.domain, `/funnels/${encodeURIComponent(f.id)}`)), reloadRef, statusRef))));
  };
  return listPanel('Funnels', 'Steps in order; a visitor counts at a step after completing the ones before it.', load, (reload, status) => {
    reloadRef = reload;
    statusRef = status;
    const name = h('input', { type: 'text', required: true, maxlength: '80' });
    const steps = h('fieldset', { class: 'steps' }, h('legend', null, 'Steps'), stepRow(1), stepRow(2));
    const add = h('button', { type: 'button', class: 'secondary', onclick: () => steps.append(stepRow(steps.querySelectorAll('.step-row').length + 1)) }, 'Add step');
    return h('form', { class: 'stack-form', onsubmit: submitWith(status, async () => {
      const rows = [...steps.querySelectorAll('.step-row')].map((r) => ({ type: (r.querySelector('select') as HTMLSelectElement).value, value: (r.querySelector('input') as HTMLInputElement).value }));
      await api('POST', projectPath(p.domain, '/funnels'), { name: name.value, steps: rows });
      status.ok(`Funnel ${name.value} added.`);
      await reload();
    }) }, field('Funnel name', name), steps, h('div', { class: 'actions' }, add, h('button', { type: 'submit' }, 'Add funnel')));
  });
}

/** Goals and funnels editors. */
export function goalsPage(p: ProjectDetail): HTMLElement[] {
  return [goalsPanel(p), funnelsPanel(p)];
}

type Schedule = { frequency: string; period: string; limit: number; webhookUrl: string | null; nextRunAt: string; lastRunAt: string | null; webhookSecret?: string };

/** Scheduled exports: the schedule (create, change, stop) and the files it wrote. */
export function exportsPage(p: ProjectDetail): HTMLElement[] {
  const schedulePath = projectPath(p.domain, '/export/schedule');
  const frequency = h('select', null, ['daily', 'weekly', 'monthly'].map((f) => h('option', { value: f }, f)));
  const period = h('select', null, PERIODS.map(([k, label]) => h('option', { value: k, selected: k === '7d' }, label)));
  const webhook = h('input', { type: 'url', placeholder: 'https://example.com/hooks/sightline' });
  const current = h('div', { 'aria-live': 'polite' });
  const status = statusLine();
  const show = (s: Schedule | null) =>
    replace(current, s ? h('p', null, `Active: ${s.frequency}, ${s.period}, next run ${fmtDate(s.nextRunAt)}, last run ${fmtDate(s.lastRunAt)}.`, s.webhookSecret ? h('span', null, ' Webhook secret (shown once): ', h('code', { class: 'secret' }, s.webhookSecret)) : null) : empty('No scheduled export.'));
  api<Schedule>('GET', schedulePath).then(
    (s) => {
      show(s);
      frequency.value = s.frequency;
      period.value = s.period;
      webhook.value = s.webhookUrl ?? '';
    },
    (err) => ((err as { status?: number }).status === 404 ? show(null) : status.error((err as Error).message)),
  );
  const files = h('div', null, h('p', { class: 'loading' }, 'Loading files…'));
  api<{ exports: { name: string; size: number; createdAt: string }[] }>('GET', projectPath(p.domain, '/exports')).then(
    ({ exports }) =>
      replace(files, exports.length === 0 ? empty('No exported files yet.') : h('ul', { class: 'rows' }, exports.map((f) => h('li', null, h('span', null, `${f.name} · ${(f.size / 1024).toFixed(1)} KB · ${fmtDate(f.createdAt)}`), h('button', { type: 'button', class: 'secondary small', onclick: () => download(projectPath(p.domain, `/exports/${encodeURIComponent(f.name)}`), f.name).catch((e: Error) => status.error(e.message)) }, 'Download'))))),
    (err: Error) => replace(files, h('p', { class: 'error-box', role: 'alert' }, err.message)),
  );
  const form = h('form', { class: 'inline-form', onsubmit: submitWith(status, async () => {
    show(await api<Schedule>('PUT', schedulePath, { frequency: frequency.value, period: period.value, webhookUrl: webhook.value.trim() || null }));
    status.ok('Schedule saved.');
  }) }, field('Frequency', frequency), field('Period', period), field('Webhook URL (optional)', webhook), h('button', { type: 'submit' }, 'Save schedule'));
  const stop = h('button', { type: 'button', class: 'danger', onclick: async () => {
    try {
      await api('DELETE', schedulePath);
      show(null);
      status.ok('Schedule stopped.');
    } catch (err) {
      status.error((err as Error).message);
    }
  } }, 'Stop schedule');
  return [h('section', { class: 'panel' }, h('h2', null, 'Scheduled export'), h('p', { class: 'muted' }, 'A CSV of the reports is written on a schedule; files are listed below.'), current, form, stop, status.el), h('section', { class: 'panel' }, h('h2', null, 'Exported files'), files)];
}
