import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

/** One message as the SMTP server received it: the envelope, the raw text and the parsed MIME. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface SmtpSink {
  /** `smtp://user:pass@127.0.0.1:port` for SMTP_URL. */
  url: string;
  messages: ReceivedMail[];
  /** The next `times` messages are answered with `code` (e.g. 451 transient, 550 permanent). */
  refuseNext(code: number, times?: number): void;
  /** DATA attempts seen, accepted or refused. */
  attempts(): number;
  /** Waits until `count` messages match `filter`. */
  waitFor(filter: (m: ReceivedMail) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on a random loopback port (the `smtp-server` package) that requires the
 * credentials of its URL, keeps every message and parses it with `mailparser`, so tests read
 * what a mail client would: headers, the text and the HTML part.
 */
export async function startSmtpSink(opts: { user?: string; pass?: string } = {}): Promise<SmtpSink> {
  const user = opts.user ?? 'sightline';
  const pass = opts.pass ?? 'mail-secret';
  const messages: ReceivedMail[] = [];
  let refusals: { code: number; left: number } | null = null;
  let attempts = 0;
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (the built-in certificate is not trusted), AUTH allowed without TLS.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === pass) cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        attempts++;
        if (refusals && refusals.left > 0) {
          refusals.left--;
          const err = Object.assign(new Error(refusals.code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: refusals.code });
          cb(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw)
          .then((parsed) => {
            messages.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            cb();
          })
          .catch((err: Error) => cb(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://${user}:${pass}@127.0.0.1:${port}`,
    messages,
    refuseNext(code, times = 1) {
      refusals = { code, left: times };
    },
    attempts: () => attempts,
    async waitFor(filter, count = 1, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.filter(filter);
        if (found.length >= count) return found;
        if (Date.now() > until) throw new Error(`expected ${count} message(s), got ${found.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A header's raw value as sent (mailparser folds `List-*` headers into an object; this reads the line). */
export function headerValue(mail: ParsedMail, name: string): string | undefined {
  const line = mail.headerLines.find((h) => h.key === name.toLowerCase())?.line;
  return line?.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
}
