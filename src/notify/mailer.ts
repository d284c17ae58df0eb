import { ApiError } from '../errors.js';

/** One email: a text and an HTML part, extra headers (List-Unsubscribe…), one recipient. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

/**
 * The email delivery port. Node: SMTP (smtp-mailer.ts, from SMTP_URL); Workers and Node
 * without SMTP: a JSON email API (http-mailer.ts, from EMAIL_API_URL). Absent when neither is set.
 */
export interface Mailer {
  /** Sends one message; throws a MailError, `permanent` when trying again cannot help (5xx SMTP reply, 4xx API answer). */
  send(message: MailMessage): Promise<void>;
}

export class MailError extends Error {
  override name = 'MailError';
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export const EMAIL_NOT_CONFIGURED = 'Email is not configured on this server: set SMTP_URL (or EMAIL_API_URL on Workers)';

/** The mailer, or the 409 every email route answers when the server has none. */
export function requireMailer(mailer: Mailer | undefined): Mailer {
  if (!mailer) throw new ApiError(409, EMAIL_NOT_CONFIGURED);
  return mailer;
}
