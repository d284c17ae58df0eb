import { createTransport } from 'nodemailer';
import { MailError, type Mailer } from './mailer.js';

/**
 * SMTP delivery on Node through nodemailer, from `SMTP_URL` (`smtp://user:pass@host:587` with
 * STARTTLS when offered, `smtps://…:465` for implicit TLS). One connection per message: reports
 * and alerts are few, and a fresh connection never inherits a half-broken one. Node only: the
 * Worker bundle never imports this file.
 */
export function smtpMailer(url: string, from: string): Mailer & { close(): void } {
  const transport = createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html, headers: message.headers });
      } catch (err) {
        // A 5xx reply (unknown mailbox, refused sender) fails the same way next time; 4xx and network errors may pass later.
        const code = (err as { responseCode?: number }).responseCode;
        throw new MailError(`SMTP: ${(err as Error).message}`, code !== undefined && code >= 500);
      }
    },
    close() {
      transport.close();
    },
  };
}
