import * as v from 'valibot';

const WEBHOOK_MESSAGE = 'webhookUrl must be an https URL (at most 2000 characters) or null';

/**
 * The `webhookUrl` field of every body that takes one (export schedules, alerts): an https URL of
 * at most 2000 characters, or null (the default). Whether its host is public is checked apart,
 * with DNS, by `assertWebhookTarget` (webhook-target.ts).
 */
export const WebhookUrlField = v.optional(
  v.nullable(
    v.pipe(
      v.string(WEBHOOK_MESSAGE),
      v.trim(),
      v.maxLength(2000, WEBHOOK_MESSAGE),
      v.url(WEBHOOK_MESSAGE),
      v.check((u) => /^https:\/\//i.test(u), WEBHOOK_MESSAGE),
    ),
  ),
  null,
);
