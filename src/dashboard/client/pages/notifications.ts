import { api, projectPath } from '../api.js';
import { confirmDialog, field, h, replace, statusLine } from '../dom.js';
import { fmtDate } from '../format.js';
import { empty } from '../widgets.js';
import type { ProjectDetail } from './settings.js';

type EmailReport = { frequency: 'weekly' | 'monthly'; recipients: string[]; nextRunAt: string; lastSentAt: string | null };
type Alert = { id: string; type: 'spike' | 'drop' | 'silent'; visitors: number | null; percent: number | null; hours: number | null; email: string[]; webhookUrl: string | null; cooldownHours: number; lastFiredAt: string | null; webhookSecret?: string };

/** Addresses typed one per line or separated by commas. */
const addresses = (text: string) => text.split(/[\s,;]+/).map((s) => s.trim()).filter(Boolean);

function describeAlert(a: Alert): string {
  if (a.type === 'spike') return `Spike: ${a.visitors} or more visitors in 60 minutes`;
  if (a.type === 'drop') return `Drop: last 24 hours at or below ${a.percent}% of the same day last week`;
  return `Silent: no events for ${a.hours} hour${a.hours === 1 ? '' : 's'}`;
}

/** The weekly or monthly email report: recipients, frequency, save, send now, stop. */
function emailReportPanel(p: ProjectDetail): HTMLElement {
  const path = projectPath(p.domain, '/email-reports');
  const frequency = h('select', null, h('option', { value: 'weekly' }, 'Weekly (Monday morning)'), h('option', { value: 'monthly' }, 'Monthly (on the 1st)'));
  const recipients = h('textarea', { rows: '3', required: true, placeholder: 'you@example.com, team@example.com' });
  const current = h('div', { 'aria-live': 'polite' }, h('p', { class: 'loading' }, 'Loading…'));
  const status = statusLine();
  const show = (r: EmailReport | null) =>
    replace(current, r ? h('p', null, `Active: ${r.frequency} to ${r.recipients.length ? r.recipients.join(', ') : 'nobody (everyone unsubscribed)'}; next ${fmtDate(r.nextRunAt)}, last sent ${fmtDate(r.lastSentAt)}.`) : empty('No email report.'));
  api<EmailReport>('GET', path).then(
    (r) => {
      show(r);
      frequency.value = r.frequency;
      recipients.value = r.recipients.join(', ');
    },
    (err) => ((err as { status?: number }).status === 404 ? show(null) : status.error((err as Error).message)),
  );
  const act = (fn: () => Promise<void>) => async (e?: Event) => {
    e?.preventDefault();
    status.clear();
    try {
      await fn();
    } catch (err) {
      status.error((err as Error).message);
    }
  };
  const form = h('form', { class: 'inline-form', onsubmit: act(async () => {
    show(await api<EmailReport>('PUT', path, { frequency: frequency.value, recipients: addresses(recipients.value) }));
    status.ok('Email report saved.');
  }) }, field('Frequency', frequency), field('Recipients (up to 20)', recipients), h('button', { type: 'submit' }, 'Save email report'));
  const sendNow = h('button', { type: 'button', class: 'secondary', onclick: act(async () => {
    const r = await api<{ sent: string[]; failed: { email: string }[] }>('POST', `${path}/send`);
    status.ok(`Sent to ${r.sent.length} recipient${r.sent.length === 1 ? '' : 's'}${r.failed.length ? `; failed for ${r.failed.map((f) => f.email).join(', ')}` : ''}.`);
  }) }, 'Send now');
  const stop = h('button', { type: 'button', class: 'danger', onclick: act(async () => {
    if (!(await confirmDialog({ title: 'Stop the email report?', message: 'Nobody gets it any more.', confirmLabel: 'Stop' }))) return;
    await api('DELETE', path);
    show(null);
    status.ok('Email report stopped.');
  }) }, 'Stop email report');
  return h(
    'section',
    { class: 'panel' },
    h('h2', null, 'Email report'),
    h('p', { class: 'muted' }, 'Visitors, pageviews, sessions, bounce rate and visit duration with their change, and the top pages, sources, countries and goals of the last week or month, sent after 08:00 in the project’s time zone. Every email has a one-click unsubscribe link.'),
    current,
    form,
    h('div', { class: 'actions' }, sendNow, stop),
    status.el,
  );
}

/** Traffic alerts: list with remove, and a form to add one. */
function alertsPanel(p: ProjectDetail): HTMLElement {
  const path = projectPath(p.domain, '/alerts');
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  const secret = h('div', { 'aria-live': 'polite' });
  const status = statusLine();
  const reload = async () => {
    try {
      const { alerts } = await api<{ alerts: Alert[] }>('GET', path);
      replace(list, alerts.length === 0 ? empty('No alerts yet.') : h('ul', { class: 'rows' }, alerts.map((a) => h('li', null,
        h('span', null, h('strong', null, describeAlert(a)), ` · to ${[...a.email, a.webhookUrl ? 'webhook' : ''].filter(Boolean).join(', ')} · quiet ${a.cooldownHours} h · last fired ${fmtDate(a.lastFiredAt)}`),
        h('button', { type: 'button', class: 'danger small', 'aria-label': `Delete alert ${describeAlert(a)}`, onclick: async () => {
          if (!(await confirmDialog({ title: 'Delete this alert?', message: describeAlert(a), confirmLabel: 'Delete' }))) return;
          try {
            await api('DELETE', `${path}/${encodeURIComponent(a.id)}`);
            status.ok('Alert deleted.');
            await reload();
          } catch (err) {
            status.error((err as Error).message);
          }
        } }, 'Delete'),
      ))));
    } catch (err) {
      replace(list, h('p', { class: 'error-box', role: 'alert' }, (err as Error).message));
    }
  };
  void reload();
  const type = h('select', null, h('option', { value: 'spike' }, 'Traffic spike'), h('option', { value: 'drop' }, 'Traffic drop'), h('option', { value: 'silent' }, 'Tracker silent'));
  const threshold = h('input', { type: 'number', min: '1', step: '1', required: true, value: '100' });
  const thresholdLabel = h('span', null, 'Visitors in 60 minutes');
  const thresholdField = field('Threshold', threshold);
  (thresholdField.querySelector('label') as HTMLElement).replaceChildren(thresholdLabel);
  const defaults = { spike: ['Visitors in 60 minutes', '100'], drop: ['Percent of last week', '50'], silent: ['Hours without events', '6'] } as const;
  type.addEventListener('change', () => {
    const [label, value] = defaults[type.value as keyof typeof defaults];
    thresholdLabel.textContent = label;
    threshold.value = value;
  });
  const email = h('input', { type: 'text', placeholder: 'oncall@example.com' });
  const webhook = h('input', { type: 'url', placeholder: 'https://hooks.slack.com/services/…' });
  const cooldown = h('input', { type: 'number', min: '1', max: '168', step: '1', value: '12' });
  const form = h('form', { class: 'inline-form', onsubmit: async (e: Event) => {
    e.preventDefault();
    status.clear();
    replace(secret);
    const key = { spike: 'visitors', drop: 'percent', silent: 'hours' }[type.value as 'spike'];
    try {
      const created = await api<Alert>('POST', path, { type: type.value, [key]: Number(threshold.value), email: addresses(email.value), webhookUrl: webhook.value.trim() || null, cooldownHours: Number(cooldown.value) });
      status.ok('Alert added.');
      if (created.webhookSecret) replace(secret, h('p', null, 'Webhook secret (shown once): ', h('code', { class: 'secret' }, created.webhookSecret)));
      await reload();
    } catch (err) {
      status.error((err as Error).message);
    }
  } }, field('Type', type), thresholdField, field('Email (optional)', email), field('Webhook URL (optional)', webhook), field('Quiet hours after firing', cooldown), h('button', { type: 'submit' }, 'Add alert'));
  return h(
    'section',
    { class: 'panel' },
    h('h2', null, 'Alerts'),
    h('p', { class: 'muted' }, 'Checked on every jobs run (every minute on Node). An alert fires once, then waits for its quiet hours and for the condition to clear and return. Webhooks post JSON with a text field that Slack and Discord show.'),
    list,
    form,
    secret,
    status.el,
  );
}

/**
 * Email reports and alerts (owners and admins). The project detail tells only whether the caller
 * owns it; for anyone else the alerts list answers 404 unless they are an admin.
 */
export function notificationsPage(p: ProjectDetail): HTMLElement[] {
  if (p.isOwner) return [emailReportPanel(p), alertsPanel(p)];
  const holder = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  api('GET', projectPath(p.domain, '/alerts')).then(
    () => replace(holder, emailReportPanel(p), alertsPanel(p)),
    (err) =>
      replace(holder, (err as { status?: number }).status === 404 ? h('p', { class: 'panel' }, 'Only owners and admins of this project manage its notifications.') : h('p', { class: 'error-box', role: 'alert' }, (err as Error).message)),
  );
  return [holder];
}
