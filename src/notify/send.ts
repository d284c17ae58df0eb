import type { Redis } from '@upstash/redis';
import { MailError, type MailMessage, type Mailer } from './mailer.js';
import { logError } from '../log.js';

/** Redis list of the last failed deliveries (newest first), for operators: `LRANGE notify:email-failures 0 -1`. */
export const EMAIL_FAILURES_KEY = 'notify:email-failures';
const FAILURES_KEPT = 200;
/** Waits between attempts: three tries over about six seconds ride out a greylisting or restarting server. */
export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000];

export type SendOutcome = { ok: true; attempts: number } | { ok: false; attempts: number; error: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends one message, retrying transient failures after each of `delaysMs`. A message that
 * still fails is written to the failure log (stderr and the Redis list above) with `context`
 * (which report or alert); the caller gets the outcome and never an exception.
 */
export async function sendWithRetries(
  deps: { redis: Redis; mailer: Mailer; now: () => number },
  message: MailMessage,
  opts: { context: string; delaysMs?: readonly number[] },
): Promise<SendOutcome> {
  const delays = opts.delaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  let error = '';
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      await deps.mailer.send(message);
      return { ok: true, attempts };
    } catch (err) {
      error = (err as Error).message;
      const permanent = err instanceof MailError && err.permanent;
      if (permanent || attempts > delays.length) break;
      await sleep(delays[attempts - 1]!);
    }
  }
  logError(`[sightline] email to ${message.to} (${opts.context}) failed after ${attempts} attempt(s): ${error}`);
  const entry = { at: new Date(deps.now()).toISOString(), to: message.to, subject: message.subject, context: opts.context, attempts, error };
  try {
    await deps.redis.multi().lpush(EMAIL_FAILURES_KEY, JSON.stringify(entry)).ltrim(EMAIL_FAILURES_KEY, 0, FAILURES_KEPT - 1).exec();
  } catch {
    // The log is best effort: Redis being down must not turn a failed email into a failed job.
  }
  return { ok: false, attempts, error };
}
