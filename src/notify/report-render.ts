import { escapeHtml, formatCount, formatDuration, formatPercent, formatSpan, pointChange, relativeChange, type Change } from './format.js';
import type { ReportData, TopRow } from './report-data.js';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

interface Metric {
  label: string;
  value: string;
  change: Change;
  /** Whether a rise is good news (false for bounce rate), for the colour of the change. */
  upIsGood: boolean;
}

function metrics(d: ReportData): Metric[] {
  const { current: c, previous: p } = d;
  return [
    { label: 'Visitors', value: formatCount(c.visitors), change: relativeChange(c.visitors, p.visitors), upIsGood: true },
    { label: 'Pageviews', value: formatCount(c.pageviews), change: relativeChange(c.pageviews, p.pageviews), upIsGood: true },
    { label: 'Sessions', value: formatCount(c.sessions), change: relativeChange(c.sessions, p.sessions), upIsGood: true },
    { label: 'Bounce rate', value: formatPercent(c.bounceRate), change: pointChange(c.bounceRate, p.bounceRate), upIsGood: false },
    { label: 'Visit duration', value: formatDuration(c.visitDurationSeconds), change: relativeChange(c.visitDurationSeconds, p.visitDurationSeconds), upIsGood: true },
  ];
}

const noun = (d: ReportData) => (d.frequency === 'weekly' ? 'week' : 'month');
const title = (d: ReportData) => `${d.frequency === 'weekly' ? 'Weekly' : 'Monthly'} report for ${d.domain}`;

/* ---------------------------------------------------------------- text part */

const pad = (s: string, n: number) => (s.length >= n ? `${s} ` : s + ' '.repeat(n - s.length));

function textList(heading: string, rows: TopRow[]): string {
  if (rows.length === 0) return `${heading}\n  (none)\n`;
  const width = Math.min(48, Math.max(...rows.map((r) => r.name.length)) + 2);
  return `${heading} (visitors, pageviews)\n${rows.map((r) => `  ${pad(r.name, width)}${pad(formatCount(r.visitors), 10)}${formatCount(r.pageviews)}`).join('\n')}\n`;
}

function renderText(d: ReportData, links: { dashboard: string; unsubscribe: string }, span: string): string {
  const lines = metrics(d).map((m) => `${pad(m.label, 16)}${pad(m.value, 10)}${m.change.text}`);
  const goals =
    d.goals.length === 0
      ? ''
      : `\nGoals (conversions, conversion rate)\n${d.goals
          .map((g) => `  ${pad(g.name, 30)}${pad(formatCount(g.conversions), 10)}${pad(formatPercent(g.conversionRate), 8)}${relativeChange(g.conversions, g.previousConversions).text}`)
          .join('\n')}\n`;
  return [
    `${title(d)}`,
    `${span} (${d.timeZone}), compared with the ${noun(d)} before`,
    '',
    ...lines,
    '',
    textList('Top pages', d.pages),
    textList('Top sources', d.sources),
    textList('Top countries', d.countries) + goals,
    `Open the dashboard: ${links.dashboard}`,
    '',
    `You get this email because an owner or admin of ${d.domain} added you to its ${d.frequency} report.`,
    `Unsubscribe: ${links.unsubscribe}`,
    '',
  ].join('\n');
}

/* ---------------------------------------------------------------- HTML part */

// Light colours inline (what every client shows); the <style> block swaps them in clients with dark mode.
const C = { page: '#f1f5f9', card: '#ffffff', text: '#0f172a', muted: '#64748b', line: '#e2e8f0', link: '#2563eb', good: '#16a34a', bad: '#dc2626' };
const FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";

function changeCell(m: Metric): string {
  const colour = m.change.trend === 'flat' ? C.muted : (m.change.trend === 'up') === m.upIsGood ? C.good : C.bad;
  return `<span style="color:${colour};font-size:13px">${escapeHtml(m.change.text)}</span>`;
}

function htmlTable(heading: string, columns: [string, string, string], rows: string[][]): string {
  const th = (s: string, align: string) => `<th align="${align}" class="sl-muted sl-line" style="padding:6px 0;border-bottom:1px solid ${C.line};color:${C.muted};font-size:12px;font-weight:600">${escapeHtml(s)}</th>`;
  const td = (s: string, align: string) => `<td align="${align}" class="sl-line" style="padding:6px 0;border-bottom:1px solid ${C.line};font-size:14px;word-break:break-all">${s}</td>`;
  const body =
    rows.length === 0
      ? `<tr><td colspan="3" class="sl-muted" style="padding:6px 0;color:${C.muted};font-size:14px">None in this period</td></tr>`
      : rows.map((r) => `<tr>${td(r[0]!, 'left')}${td(r[1]!, 'right')}${td(r[2]!, 'right')}</tr>`).join('');
  return (
    `<h2 style="margin:24px 0 4px;font-size:15px">${escapeHtml(heading)}</h2>` +
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse">` +
    `<tr>${th(columns[0], 'left')}${th(columns[1], 'right')}${th(columns[2], 'right')}</tr>${body}</table>`
  );
}

const topRows = (rows: TopRow[]) => rows.map((r) => [escapeHtml(r.name), formatCount(r.visitors), formatCount(r.pageviews)]);

function renderHtml(d: ReportData, links: { dashboard: string; unsubscribe: string }, span: string): string {
  const metricRows = metrics(d)
    .map(
      (m) =>
        `<tr><td class="sl-line" style="padding:8px 0;border-bottom:1px solid ${C.line};font-size:14px">${escapeHtml(m.label)}</td>` +
        `<td align="right" class="sl-line" style="padding:8px 0;border-bottom:1px solid ${C.line};font-size:18px;font-weight:700">${escapeHtml(m.value)}</td>` +
        `<td align="right" class="sl-line" style="padding:8px 0 8px 12px;border-bottom:1px solid ${C.line};width:70px">${changeCell(m)}</td></tr>`,
    )
    .join('');
  const goals =
    d.goals.length === 0
      ? ''
      : htmlTable(
          'Goals',
          ['Goal', 'Conversions', 'Rate'],
          d.goals.map((g) => [escapeHtml(g.name), `${formatCount(g.conversions)} <span style="color:${C.muted};font-size:12px">${escapeHtml(relativeChange(g.conversions, g.previousConversions).text)}</span>`, formatPercent(g.conversionRate)]),
        );
  const dark =
    '@media (prefers-color-scheme: dark){' +
    `.sl-page{background:#0b1120 !important}.sl-card{background:#111827 !important;color:#e5e7eb !important}` +
    `.sl-muted{color:#9ca3af !important}.sl-line{border-color:#1f2937 !important}.sl-link{color:#93c5fd !important}.sl-button{background:#3b82f6 !important}}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="supported-color-schemes" content="light dark">
<title>${escapeHtml(title(d))}</title><style>${dark}</style></head>
<body class="sl-page" style="margin:0;padding:0;background:${C.page};font-family:${FONT};color:${C.text}">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" class="sl-page" style="background:${C.page}"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" class="sl-card" style="width:100%;max-width:600px;background:${C.card};color:${C.text};border-radius:8px"><tr><td style="padding:24px 28px">
<h1 style="margin:0;font-size:20px">${escapeHtml(title(d))}</h1>
<p class="sl-muted" style="margin:4px 0 16px;color:${C.muted};font-size:13px">${escapeHtml(span)} (${escapeHtml(d.timeZone)}), compared with the ${noun(d)} before</p>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse">${metricRows}</table>
${htmlTable('Top pages', ['Page', 'Visitors', 'Pageviews'], topRows(d.pages))}
${htmlTable('Top sources', ['Source', 'Visitors', 'Pageviews'], topRows(d.sources))}
${htmlTable('Top countries', ['Country', 'Visitors', 'Pageviews'], topRows(d.countries))}
${goals}
<p style="margin:28px 0 8px"><a href="${escapeHtml(links.dashboard)}" class="sl-button" style="display:inline-block;background:${C.link};color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-size:14px;font-weight:600">Open the dashboard</a></p>
</td></tr></table>
<p class="sl-muted" style="margin:16px 0 0;max-width:600px;color:${C.muted};font-size:12px">You get this email because an owner or admin of ${escapeHtml(d.domain)} added you to its ${d.frequency} report. <a href="${escapeHtml(links.unsubscribe)}" class="sl-link" style="color:${C.link}">Unsubscribe</a></p>
</td></tr></table>
</body></html>
`;
}

/** The email of one report: subject, plain-text part and HTML part (tables, inline CSS, no scripts). */
export function renderReportEmail(d: ReportData, links: { dashboard: string; unsubscribe: string }): RenderedEmail {
  const span = formatSpan(d.frequency, d.span.from, d.span.to, d.timeZone);
  return { subject: `${title(d)} (${span})`, text: renderText(d, links, span), html: renderHtml(d, links, span) };
}
