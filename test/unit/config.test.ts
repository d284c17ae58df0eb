import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';

describe('parseConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const cfg = parseConfig({});
    expect(cfg).toMatchObject({
      PORT: 8787,
      DATA_DIR: './data',
      REDIS_URL: 'redis://127.0.0.1:6379',
      CLICKHOUSE_DATABASE: 'default',
      RATE_LIMIT_API_PER_MIN: 600,
      RATE_LIMIT_PATCH_PER_MIN: 30,
      RATE_LIMIT_VERIFY_PER_MIN: 10,
      RATE_LIMIT_EXPORT_PER_MIN: 10,
      RATE_LIMIT_WINDOW_SEC: 60,
      INGEST_FLUSH_MS: 5000,
      INGEST_REDIS_TIMEOUT_MS: 50,
    });
  });

  it('sends reads beside the chain on the embedded engine unless EMBEDDED_READS_BESIDE is off', () => {
    expect(parseConfig({}).EMBEDDED_READS_BESIDE).toBe(true);
    expect(parseConfig({ EMBEDDED_READS_BESIDE: ' ' }).EMBEDDED_READS_BESIDE).toBe(true);
    for (const off of ['0', 'false', ' NO ']) expect(parseConfig({ EMBEDDED_READS_BESIDE: off }).EMBEDDED_READS_BESIDE).toBe(false);
    expect(parseConfig({ EMBEDDED_READS_BESIDE: 'yes' }).EMBEDDED_READS_BESIDE).toBe(true);
    expect(() => parseConfig({ EMBEDDED_READS_BESIDE: 'sometimes' })).toThrow(/EMBEDDED_READS_BESIDE must be true or false/);
  });

  it('leaves IMPORT_WORKERS to the entry point unless given', () => {
    expect(parseConfig({}).IMPORT_WORKERS).toBeUndefined();
    expect(parseConfig({ IMPORT_WORKERS: '' }).IMPORT_WORKERS).toBeUndefined();
    expect(parseConfig({ IMPORT_WORKERS: '0' }).IMPORT_WORKERS).toBe(0);
    expect(parseConfig({ IMPORT_WORKERS: ' 3 ' }).IMPORT_WORKERS).toBe(3);
  });

  it('takes DNS_SERVERS as a list of IP[:port] and refuses anything else', () => {
    expect(parseConfig({ DNS_SERVERS: '1.1.1.1, 8.8.8.8:53,[2606:4700::1111]:53' }).DNS_SERVERS).toBe('1.1.1.1, 8.8.8.8:53,[2606:4700::1111]:53');
    expect(parseConfig({}).DNS_SERVERS).toBeUndefined();
    expect(() => parseConfig({ DNS_SERVERS: 'dns.example.com' })).toThrow(/DNS_SERVERS must be a comma-separated list/);
  });

  it('reads the jobs interval and the email settings', () => {
    expect(parseConfig({}).JOBS_INTERVAL_SEC).toBe(60);
    expect(parseConfig({ JOBS_INTERVAL_SEC: '5' }).JOBS_INTERVAL_SEC).toBe(5);
    expect(parseConfig({}).SMTP_URL).toBeUndefined();
    expect(parseConfig({ SMTP_URL: '' }).SMTP_URL).toBeUndefined();
    expect(parseConfig({ SMTP_URL: 'smtp://u:p@mail.example:587' }).SMTP_URL).toBe('smtp://u:p@mail.example:587');
    expect(parseConfig({ SMTP_FROM: 'Stats <stats@example.com>' }).SMTP_FROM).toBe('Stats <stats@example.com>');
  });

  it('reads given values and ignores unknown variables', () => {
    const cfg = parseConfig({ PORT: '9000', REDIS_URL: 'rediss://h:6380/2', RATE_LIMIT_PATCH_PER_MIN: '3', INGEST_REDIS_TIMEOUT_MS: '250', HOME: '/root' });
    expect(cfg.PORT).toBe(9000);
    expect(cfg.REDIS_URL).toBe('rediss://h:6380/2');
    expect(cfg.RATE_LIMIT_PATCH_PER_MIN).toBe(3);
    expect(cfg.INGEST_REDIS_TIMEOUT_MS).toBe(250);
    expect(cfg).not.toHaveProperty('HOME');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['REDIS_URL', 'http://x'],
    ['RETENTION_DAYS', '0'],
    ['INGEST_FLUSH_MS', '5'],
    ['INGEST_REDIS_TIMEOUT_MS', 'soon'],
    ['IMPORT_WORKERS', '-1'],
    ['RATE_LIMIT_API_PER_MIN', '1.5'],
    ['PUBLIC_URL', 'not a url'],
    ['CLICKHOUSE_DATABASE', 'drop table;'],
    ['JOBS_INTERVAL_SEC', '0'],
    ['SMTP_URL', 'http://mail.example'],
    ['UNSUBSCRIBE_SECRET', 'short'],
  ])('%s=%s throws a ConfigError naming the variable', (name, value) => {
    let caught: unknown;
    try {
      parseConfig({ [name]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain(name);
  });

  it('requires the Upstash token when the Upstash URL is set', () => {
    expect(() => parseConfig({ UPSTASH_REDIS_REST_URL: 'https://x.upstash.io' })).toThrow(/UPSTASH_REDIS_REST_TOKEN/);
  });
});

describe('node entry with a bad value', () => {
  it('exits non-zero and names PORT on stderr', async () => {
    const child = spawn('npx', ['tsx', 'src/entry/node.ts'], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: 'abc', REDIS_URL: 'redis://127.0.0.1:1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(stderr).toMatch(/PORT/);
  });
});
