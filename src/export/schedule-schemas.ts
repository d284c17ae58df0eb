import * as v from 'valibot';
import { REPORT_PERIODS } from '../reports/periods.js';
import { FREQUENCIES } from './schedule-store.js';
import { WebhookUrlField } from '../jobs/webhook-url-schema.js';
import { parseFilters } from '../analysis/filters.js';
import { exportFiltersProblem } from './build.js';

/**
 * `filters` of a schedule: kept as the text the caller sent (the job parses it at each run), and
 * checked now with the export's own rules, so a schedule never stores filters its runs would refuse.
 */
const ScheduleFilters = v.pipe(
  v.optional(v.string('filters must be text'), ''),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      const problem = exportFiltersProblem(parseFilters(dataset.value));
      if (problem) addIssue({ message: problem });
    } catch (error) {
      addIssue({ message: error instanceof Error ? error.message : 'filters: invalid' });
    }
  }),
);

const LIMIT_MESSAGE = 'limit must be an integer from 1 to 500';

/** Body of `PUT …/export/schedule`. */
export const ScheduleBody = v.object(
  {
    frequency: v.picklist(FREQUENCIES, `frequency must be one of: ${FREQUENCIES.join(', ')}`),
    period: v.optional(v.picklist(REPORT_PERIODS, `period must be one of: ${REPORT_PERIODS.join(', ')}`), '30d'),
    limit: v.optional(v.pipe(v.number(LIMIT_MESSAGE), v.integer(LIMIT_MESSAGE), v.minValue(1, LIMIT_MESSAGE), v.maxValue(500, LIMIT_MESSAGE)), 100),
    filters: ScheduleFilters,
    webhookUrl: WebhookUrlField,
    rotateSecret: v.optional(v.boolean('rotateSecret must be true or false'), false),
  },
  'Body must be a JSON object with frequency (daily, weekly or monthly), period and optional webhookUrl',
);

/** A schedule as the API shows it: never the secret, except `webhookSecret` once on PUT. */
export const ScheduleView = v.object({
  frequency: v.picklist(FREQUENCIES),
  period: v.picklist(REPORT_PERIODS),
  limit: v.number(),
  /** The `filters` text every run applies ('' for none). */
  filters: v.string(),
  webhookUrl: v.nullable(v.string()),
  nextRunAt: v.pipe(v.string(), v.isoTimestamp()),
  lastRunAt: v.nullable(v.string()),
  lastFile: v.nullable(v.string()),
  /** The last run's webhook: the receiver's HTTP status, or why it was not delivered (e.g. refused: a private address). */
  lastWebhook: v.nullable(v.union([v.object({ status: v.number() }), v.object({ error: v.string() })])),
  createdAt: v.string(),
  updatedAt: v.string(),
  webhookSecret: v.optional(v.string()),
});

export const ExportFileList = v.object({
  exports: v.array(v.object({ name: v.string(), size: v.number(), createdAt: v.string() })),
});

export const DeletedResult = v.object({ ok: v.literal(true) });
