import type { Deps } from '../deps.js';
import type { Project } from '../projects/store.js';
import type { Mailer } from './mailer.js';
import { gatherReport } from './report-data.js';
import type { ReportFrequency, ReportSpan } from './report-periods.js';
import { renderReportEmail } from './report-render.js';
import { sendWithRetries } from './send.js';
import { signUnsubscribe, unsubscribeSecret, unsubscribeUrl } from './unsubscribe-token.js';

export interface ReportSendResult {
  sent: string[];
  failed: { email: string; error: string }[];
}

/** Link to the project's dashboard in the web app (hash-routed). */
export const dashboardUrl = (base: string, domain: string) => `${base}/#/p/${encodeURIComponent(domain)}`;

/**
 * Gathers the report of `span` once and sends it to each recipient with its own signed
 * one-click unsubscribe link (RFC 8058: `List-Unsubscribe` with an https URL and
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`). Recipients go one after the other;
 * a failed one is logged and reported, the others still get theirs.
 */
export async function sendReport(
  deps: Deps & { mailer: Mailer },
  project: Project,
  job: { frequency: ReportFrequency; recipients: string[]; span: ReportSpan; base: string },
  opts: { delaysMs?: readonly number[] } = {},
): Promise<ReportSendResult> {
  const result: ReportSendResult = { sent: [], failed: [] };
  if (job.recipients.length === 0) return result;
  const [data, secret] = await Promise.all([gatherReport(deps, project, job.frequency, job.span), unsubscribeSecret(deps)]);
  const base = job.base.replace(/\/+$/, '');
  for (const email of job.recipients) {
    const unsubscribe = unsubscribeUrl(base, await signUnsubscribe(secret, { projectId: project.id, email }));
    const rendered = renderReportEmail(data, { dashboard: dashboardUrl(base, project.domain), unsubscribe });
    const outcome = await sendWithRetries(
      { redis: deps.redis, mailer: deps.mailer, now: () => deps.clock.now() },
      {
        to: email,
        ...rendered,
        headers: {
          'List-Unsubscribe': `<${unsubscribe}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          'Auto-Submitted': 'auto-generated',
        },
      },
      { context: `${job.frequency} report of ${project.domain}`, delaysMs: opts.delaysMs },
    );
    if (outcome.ok) result.sent.push(email);
    else result.failed.push({ email, error: outcome.error });
  }
  return result;
}
