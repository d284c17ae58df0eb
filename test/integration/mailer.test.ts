import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from '@upstash/redis';
import { connectRespRedis } from '../../src/adapters/redis-resp.js';
import { httpMailer } from '../../src/notify/http-mailer.js';
import { EMAIL_FAILURES_KEY, sendWithRetries } from '../../src/notify/send.js';
import { smtpMailer } from '../../src/notify/smtp-mailer.js';
import { TEST_REDIS_URL, unique } from '../helpers/harness.js';
import { headerValue, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

let redis: Redis;
let closeRedis: () => Promise<void>;
let sink: SmtpSink;
const FAST = [20, 20];

const message = (to: string) => ({
  to,
  subject: `Hello ${to}`,
  text: 'Plain part',
  html: '<p>HTML part</p>',
  headers: { 'List-Unsubscribe': '<https://stats.example/u?t=1>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
});

async function failuresFor(to: string) {
  const all = await redis.lrange<unknown>(EMAIL_FAILURES_KEY, 0, -1);
  return all.map((e) => (typeof e === 'string' ? JSON.parse(e) : e) as { to: string; attempts: number; error: string; context: string }).filter((e) => e.to === to);
}

beforeAll(async () => {
  ({ redis, close: closeRedis } = await connectRespRedis({ url: TEST_REDIS_URL }));
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
  await closeRedis();
});

describe('SMTP delivery (nodemailer against a real SMTP server)', () => {
  it('logs in with the URL credentials and delivers both parts and the extra headers', async () => {
    const mailer = smtpMailer(sink.url, 'Sightline Reports <reports@stats.example>');
    const to = `${unique('rcpt')}@example.org`;
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'test', delaysMs: FAST });
    mailer.close();
    expect(outcome).toEqual({ ok: true, attempts: 1 });
    const [got] = await sink.waitFor((m) => m.to.includes(to));
    expect(got.from).toBe('reports@stats.example');
    expect(got.parsed.subject).toBe(`Hello ${to}`);
    expect(got.parsed.text?.trim()).toBe('Plain part');
    expect(got.parsed.html).toContain('<p>HTML part</p>');
    expect(headerValue(got.parsed, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(headerValue(got.parsed, 'List-Unsubscribe')).toBe('<https://stats.example/u?t=1>');
  });

  it('refuses wrong credentials as a delivery failure', async () => {
    const mailer = smtpMailer(sink.url.replace('mail-secret', 'wrong'), 'reports@stats.example');
    const to = `${unique('badauth')}@example.org`;
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'auth', delaysMs: FAST });
    mailer.close();
    expect(outcome.ok).toBe(false);
    expect((await failuresFor(to)).length).toBe(1);
  });

  it('retries a transient refusal (451) and delivers once', async () => {
    const mailer = smtpMailer(sink.url, 'reports@stats.example');
    const to = `${unique('retry')}@example.org`;
    const before = sink.attempts();
    sink.refuseNext(451, 2);
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'retry', delaysMs: FAST });
    mailer.close();
    expect(outcome).toEqual({ ok: true, attempts: 3 });
    expect(sink.attempts() - before).toBe(3);
    expect(sink.messages.filter((m) => m.to.includes(to))).toHaveLength(1);
    expect(await failuresFor(to)).toEqual([]);
  });

  it('gives up at once on a permanent refusal (550) and writes the failure log', async () => {
    const mailer = smtpMailer(sink.url, 'reports@stats.example');
    const to = `${unique('perm')}@example.org`;
    const before = sink.attempts();
    sink.refuseNext(550, 5);
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'email report of x.example', delaysMs: FAST });
    sink.refuseNext(550, 0);
    mailer.close();
    expect(outcome.ok).toBe(false);
    expect(outcome.attempts).toBe(1);
    expect(sink.attempts() - before).toBe(1);
    const [logged] = await failuresFor(to);
    expect(logged).toMatchObject({ to, attempts: 1, context: 'email report of x.example' });
    expect(logged.error).toMatch(/550/);
  });

  it('retries an unreachable server and logs it after the last attempt', async () => {
    // A port that refuses connections: a server opened and closed again.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const mailer = smtpMailer(`smtp://127.0.0.1:${port}`, 'reports@stats.example');
    const to = `${unique('down')}@example.org`;
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'down', delaysMs: FAST });
    mailer.close();
    expect(outcome).toMatchObject({ ok: false, attempts: 3 });
    expect((await failuresFor(to))[0]).toMatchObject({ attempts: 3 });
  });
});

describe('email API delivery (JSON POST, the Workers path)', () => {
  let api: Server;
  let url: string;
  const bodies: { auth: string | undefined; body: Record<string, unknown> }[] = [];
  const statuses: number[] = [];

  beforeAll(async () => {
    api = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ auth: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        const status = statuses.shift() ?? 200;
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(status === 200 ? '{"id":"m1"}' : '{"message":"no"}');
      });
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/emails`;
  });
  afterAll(() => new Promise<void>((r) => api.close(() => r())));

  it('posts Resend-shaped JSON with the bearer key, retrying a 503', async () => {
    const mailer = httpMailer({ url, apiKey: 're_test', from: 'reports@stats.example' });
    const to = `${unique('api')}@example.org`;
    bodies.length = 0;
    statuses.push(503);
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'api', delaysMs: FAST });
    expect(outcome).toEqual({ ok: true, attempts: 2 });
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual({
      auth: 'Bearer re_test',
      body: { from: 'reports@stats.example', to: [to], subject: `Hello ${to}`, text: 'Plain part', html: '<p>HTML part</p>', headers: message(to).headers },
    });
  });

  it('stops at a 422 (the request itself is wrong)', async () => {
    const mailer = httpMailer({ url, apiKey: 're_test', from: 'reports@stats.example' });
    const to = `${unique('api422')}@example.org`;
    bodies.length = 0;
    statuses.push(422);
    const outcome = await sendWithRetries({ redis, mailer, now: Date.now }, message(to), { context: 'api', delaysMs: FAST });
    expect(outcome).toMatchObject({ ok: false, attempts: 1 });
    expect(bodies).toHaveLength(1);
    expect((await failuresFor(to))[0].error).toMatch(/422/);
  });
});
