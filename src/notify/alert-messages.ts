import type { AlertFacts } from './alert-conditions.js';
import { escapeHtml, formatCount } from './format.js';
import type { RenderedEmail } from './report-render.js';

/** One line that says what happened, for the email subject, the webhook `text` and chat apps. */
export function alertHeadline(domain: string, facts: AlertFacts): string {
  switch (facts.type) {
    case 'spike':
      return `Traffic spike on ${domain}: ${formatCount(facts.visitors)} visitors in the last 60 minutes (alert at ${formatCount(facts.threshold)})`;
    case 'drop': {
      const share = facts.weekBefore > 0 ? Math.round((facts.visitors / facts.weekBefore) * 100) : 0;
      return `Traffic drop on ${domain}: ${formatCount(facts.visitors)} visitors in the last 24 hours, ${share}% of the ${formatCount(facts.weekBefore)} a week earlier (alert at ${facts.percent}% or less)`;
    }
    case 'silent':
      return `No events from ${domain} for ${facts.hours} hour${facts.hours === 1 ? '' : 's'}: the tracker may have stopped sending`;
  }
}

const lastSeen = (facts: AlertFacts) =>
  facts.type === 'silent' && facts.lastEventAt !== null ? `Last event: ${new Date(facts.lastEventAt).toISOString().replace('T', ' ').slice(0, 16)} UTC.` : '';

/** The text a chat app shows: the headline, when the last event came (silent), and the dashboard link. */
export function alertText(domain: string, facts: AlertFacts, dashboard: string): string {
  return [alertHeadline(domain, facts), lastSeen(facts), dashboard].filter(Boolean).join('\n');
}

export function renderAlertEmail(domain: string, facts: AlertFacts, dashboard: string, cooldownHours: number): RenderedEmail {
  const headline = alertHeadline(domain, facts);
  const quiet = `This alert stays quiet for at least ${cooldownHours} hour${cooldownHours === 1 ? '' : 's'}, and until the condition has cleared and returned.`;
  const text = [headline, '', lastSeen(facts), `Open the dashboard: ${dashboard}`, '', quiet, ''].filter((l, i, all) => l !== '' || all[i - 1] !== '').join('\n');
  const html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="color-scheme" content="light dark"><meta name="supported-color-schemes" content="light dark"><title>${escapeHtml(headline)}</title></head>
<body style="margin:0;padding:24px 12px;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px"><tr><td>
<p style="margin:0 0 12px;font-size:16px;font-weight:600">${escapeHtml(headline)}</p>
${lastSeen(facts) ? `<p style="margin:0 0 12px;font-size:14px">${escapeHtml(lastSeen(facts))}</p>` : ''}
<p style="margin:0 0 16px"><a href="${escapeHtml(dashboard)}" style="color:#2563eb">Open the dashboard</a></p>
<p style="margin:0;font-size:12px;color:#64748b">${escapeHtml(quiet)}</p>
</td></tr></table></body></html>
`;
  return { subject: headline, text, html };
}
