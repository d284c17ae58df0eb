import * as v from 'valibot';
import { REPORT_FREQUENCIES } from './report-periods.js';

/** Most recipients of one report or alert. */
export const MAX_RECIPIENTS = 20;

/** A practical address check (RFC 5321 lengths, one @, a dotted host); the server's MTA has the last word. */
const EMAIL = /^[^\s@<>(),;:"[\]\\]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * A list of 1–20 email addresses under `field`, trimmed, lowercased and deduplicated; the
 * first bad entry is named in the 400.
 */
export function emailList(field: string) {
  const listMessage = `${field} must be a list of 1 to ${MAX_RECIPIENTS} email addresses`;
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
    v.minLength(1, listMessage),
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
