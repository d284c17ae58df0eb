import * as v from 'valibot';
import { REPORT_FREQUENCIES } from './report-periods.js';
import { WebhookUrlField } from '../jobs/webhook-url-schema.js';

/** Most recipients of one report or alert. */
export const MAX_RECIPIENTS = 20;

/** A practical address check (RFC 5321 lengths, one @, a dotted host); the server's MTA has the last word. */
const EMAIL = /^[^\s@<>(),;:"[\]\\]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * A list of `min`–20 email addresses under `field`, trimmed, lowercased and deduplicated; the
 * first bad entry is named in the 400.
 */
export function emailList(field: string, min: 0 | 1 = 1) {
  const listMessage = `${field} must be a list of ${min === 0 ? 'up' : '1'} to ${MAX_RECIPIENTS} email addresses`;
  return v.pipe(
    v.array(
      v.pipe(
        v.string(listMessage),
        v.trim(),
        v.toLowerCase(),
        v.check((s) => EMAIL.test(s), (issue) => `${field}: ${JSON.stringify(issue.input)} is not an email address`),
      ),
      listMessage,
    ),
    v.transform((list) => [...new Set(list)]),
    v.minLength(min, listMessage),
    v.maxLength(MAX_RECIPIENTS, listMessage),
  );
}

export const EmailReportBody = v.object(
  {
    frequency: v.picklist(REPORT_FREQUENCIES, `frequency must be one of: ${REPORT_FREQUENCIES.join(', ')}`),
    recipients: emailList('recipients'),
  },
  'Body must be a JSON object with frequency (weekly or monthly) and recipients (1 to 20 email addresses)',
);

export const EmailReportView = v.object({
  frequency: v.picklist(REPORT_FREQUENCIES),
  recipients: v.pipe(v.array(v.string()), v.description('Addresses that get the report (an unsubscribe removes one)')),
  nextRunAt: v.pipe(v.string(), v.isoTimestamp(), v.description('Next scheduled send: Monday or the 1st, 08:00 in the project time zone')),
  lastSentAt: v.pipe(v.nullable(v.string()), v.description('When the last scheduled report went out')),
  lastResult: v.pipe(v.nullable(v.object({ sent: v.number(), failed: v.number() })), v.description('Recipients reached and failed at the last scheduled send')),
  createdAt: v.string(),
  updatedAt: v.string(),
});

export const SendResultView = v.object({
  frequency: v.picklist(REPORT_FREQUENCIES),
  from: v.pipe(v.string(), v.description('Start of the reported period, inclusive (ISO 8601, UTC)')),
  to: v.pipe(v.string(), v.description('End of the reported period, exclusive (ISO 8601, UTC)')),
  sent: v.pipe(v.array(v.string()), v.description('Recipients the server accepted the email for')),
  failed: v.pipe(v.array(v.object({ email: v.string(), error: v.string() })), v.description('Recipients whose email failed after retries')),
});

export const OkView = v.object({ ok: v.literal(true) });

const whole = (message: string, min: number, max: number) => v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
const VISITORS_MESSAGE = 'visitors must be a whole number from 1 to 10000000';
const PERCENT_MESSAGE = 'percent must be a whole number from 1 to 99';
const HOURS_MESSAGE = 'hours must be a whole number from 1 to 72';
const COOLDOWN_MESSAGE = 'cooldownHours must be a whole number from 1 to 168';

/** The threshold field each alert type takes (and only it). */
const THRESHOLD = { spike: 'visitors', drop: 'percent', silent: 'hours' } as const;
const THRESHOLD_MESSAGE = { spike: VISITORS_MESSAGE, drop: PERCENT_MESSAGE, silent: HOURS_MESSAGE } as const;

/** Body of `POST …/alerts`. */
export const AlertBody = v.pipe(
  v.object(
    {
      type: v.picklist(['spike', 'drop', 'silent'] as const, 'type must be one of: spike, drop, silent'),
      visitors: v.optional(whole(VISITORS_MESSAGE, 1, 10_000_000)),
      percent: v.optional(whole(PERCENT_MESSAGE, 1, 99)),
      hours: v.optional(whole(HOURS_MESSAGE, 1, 72)),
      email: v.optional(emailList('email', 0), []),
      webhookUrl: WebhookUrlField,
      cooldownHours: v.optional(whole(COOLDOWN_MESSAGE, 1, 168), 12),
    },
    'Body must be a JSON object with type (spike, drop or silent), its threshold, and email and/or webhookUrl',
  ),
  v.check((b) => b[THRESHOLD[b.type]] !== undefined, (issue) => {
    const type = (issue.input as { type: keyof typeof THRESHOLD }).type;
    return `${THRESHOLD[type]} is required for ${type} alerts (${THRESHOLD_MESSAGE[type].replace(/^\w+ must be /, '')})`;
  }),
  v.check(
    (b) => (Object.keys(THRESHOLD) as (keyof typeof THRESHOLD)[]).every((t) => t === b.type || b[THRESHOLD[t]] === undefined),
    (issue) => {
      const b = issue.input as Record<string, unknown> & { type: keyof typeof THRESHOLD };
      const extra = (Object.keys(THRESHOLD) as (keyof typeof THRESHOLD)[]).find((t) => t !== b.type && b[THRESHOLD[t]] !== undefined)!;
      return `${THRESHOLD[extra]} applies to ${extra} alerts only`;
    },
  ),
  v.check((b) => (b.email?.length ?? 0) > 0 || !!b.webhookUrl, 'email or webhookUrl is required'),
);

const AlertFields = {
  id: v.string(),
  type: v.picklist(['spike', 'drop', 'silent'] as const),
  visitors: v.pipe(v.nullable(v.number()), v.description('spike: unique visitors in the last 60 minutes at or above which it fires')),
  percent: v.pipe(v.nullable(v.number()), v.description('drop: fires when the last 24 h have at most this % of the visitors of the same 24 h a week earlier (which must have ≥ 20)')),
  hours: v.pipe(v.nullable(v.number()), v.description('silent: fires after this many hours without any event, when the 24 h before had events')),
  email: v.array(v.string()),
  webhookUrl: v.nullable(v.string()),
  cooldownHours: v.number(),
  createdAt: v.string(),
  lastFiredAt: v.pipe(v.nullable(v.string()), v.description('When it last fired (ISO 8601), null if never')),
  webhookSecret: v.optional(v.pipe(v.string(), v.description('HMAC key of X-Sightline-Signature; only in the answer that created the alert'))),
};
export const AlertView = v.object(AlertFields);
export const AlertList = v.object({ alerts: v.array(v.object(AlertFields)) });
