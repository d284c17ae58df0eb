import type { Deps } from '../deps.js';
import { deliverWebhook, type Fetch } from '../jobs/webhook.js';
import type { Project } from '../projects/store.js';
import type { AlertFacts } from './alert-conditions.js';
import { alertText, renderAlertEmail } from './alert-messages.js';
import type { Alert } from './alert-store.js';
import { dashboardUrl } from './report-send.js';
import { sendWithRetries } from './send.js';
import { webhookPolicy } from '../jobs/webhook-target.js';
import { logError } from '../log.js';

export interface AlertDelivery {
  email?: { sent: number; failed: number };
  webhook?: { status: number } | { error: string };
}

/**
 * Sends a fired alert by email (each address on its own) and/or to its webhook: a JSON POST
 * signed like export notices (`X-Sightline-Signature: sha256=<HMAC of the body>` under the
 * alert's secret) whose `text` Slack shows as is and whose `content` (the same text) Discord
 * shows; the other fields are for programs.
 */
export async function deliverAlert(
  deps: Deps,
  project: Project,
  alert: Alert,
  facts: AlertFacts,
  now: number,
  opts: { fetch?: Fetch; delaysMs?: readonly number[] } = {},
): Promise<AlertDelivery> {
  const out: AlertDelivery = {};
  const dashboard = dashboardUrl((deps.config.PUBLIC_URL ?? alert.baseUrl).replace(/\/+$/, ''), project.domain);
  const text = alertText(project.domain, facts, dashboard);
  const tasks: Promise<void>[] = [];
  if (alert.webhookUrl) {
    const payload = {
      type: `alert.${alert.type}`,
      text,
      content: text,
      domain: project.domain,
      alert: { id: alert.id, type: alert.type, visitors: alert.visitors, percent: alert.percent, hours: alert.hours, cooldownHours: alert.cooldownHours },
      facts,
      firedAt: new Date(now).toISOString(),
      dashboardUrl: dashboard,
    };
    tasks.push(deliverWebhook(alert.webhookUrl, alert.secret, payload, { policy: webhookPolicy(deps), fetch: opts.fetch ?? deps.webhookFetch }).then((r) => void (out.webhook = r)));
  }
  if (alert.email.length > 0) {
    const mailer = deps.mailer;
    if (!mailer) {
      logError(`[sightline] alert ${alert.id} of ${project.domain}: email is not configured, ${alert.email.length} address(es) skipped`);
      out.email = { sent: 0, failed: alert.email.length };
    } else {
      const rendered = renderAlertEmail(project.domain, facts, dashboard, alert.cooldownHours);
      tasks.push(
        (async () => {
          const email = { sent: 0, failed: 0 };
          for (const to of alert.email) {
            const outcome = await sendWithRetries(
              { redis: deps.redis, mailer, now: () => deps.clock.now() },
              { to, ...rendered, headers: { 'Auto-Submitted': 'auto-generated' } },
              { context: `${alert.type} alert of ${project.domain}`, delaysMs: opts.delaysMs },
            );
            email[outcome.ok ? 'sent' : 'failed']++;
          }
          out.email = email;
        })(),
      );
    }
  }
  await Promise.all(tasks);
  return out;
}
