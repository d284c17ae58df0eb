import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { describeError, logError, logInfo, redactSecrets } from '../../src/log.js';

afterEach(() => vi.restoreAllMocks());

describe('redactSecrets', () => {
  it.each([
    ['Redis at redis://user:s3cret@db.internal:6379/0 is down', 'Redis at redis://user:***@db.internal:6379/0 is down'],
    ['redis://:s3cret@127.0.0.1:6379', 'redis://:***@127.0.0.1:6379'],
    ['rediss://default:p%40ss:word@host', 'rediss://default:***@host'],
    ['CLICKHOUSE_URL=https://admin:s3cret@ch.example:8443/?database=x', 'CLICKHOUSE_URL=https://admin:***@ch.example:8443/?database=x'],
    ['smtp://mailer:s3cret@smtp.example:587', 'smtp://mailer:***@smtp.example:587'],
    ['https://tokenonly@hooks.example/x', 'https://***@hooks.example/x'],
    ['https://api.example/x?user=a&password=s3cret&token=t0k#f', 'https://api.example/x?user=a&password=***&token=***#f'],
  ])('%s', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it('leaves URLs without credentials, file paths and emails alone', () => {
    const text = 'GET https://example.com/a@b, file:///work/x.ts:1:2, mail me@example.com, http://localhost:8787';
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('log lines', () => {
  it('describeError redacts the message, the stack and the causes', () => {
    const err = new Error('insert failed', { cause: new Error('connect to http://default:s3cret@ch:8123 refused') });
    const text = describeError(err);
    expect(text).toContain('insert failed');
    expect(text).toContain('caused by: Error: connect to http://default:***@ch:8123 refused');
    expect(text).not.toContain('s3cret');
  });

  it('logError and logInfo write redacted lines', () => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    const out = vi.spyOn(console, 'log').mockImplementation(() => {});
    logError('[sightline] Redis at redis://u:s3cret@h is down', new Error('again redis://u:s3cret@h'));
    logInfo('[sightline] listening on http://u:s3cret@h');
    const written = [...err.mock.calls, ...out.mock.calls].flat().join('\n');
    expect(written).toContain('redis://u:***@h');
    expect(written).not.toContain('s3cret');
  });
});

describe('configuration errors name the variable, never the value', () => {
  it.each([
    ['REDIS_URL', 'http://user:s3cret-value@redis.internal'],
    ['CLICKHOUSE_URL', 's3cret-value'],
    ['PUBLIC_URL', 's3cret-value'],
    ['CLICKHOUSE_DATABASE', 's3cret-value'],
    ['PORT', 's3cret-value'],
    ['TRUST_PROXY', 's3cret-value'],
    ['DNS_SERVERS', 's3cret-value'],
  ])('%s', (name, value) => {
    let caught: unknown;
    try {
      parseConfig({ [name]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain(name);
    expect((caught as Error).message).not.toContain('s3cret');
  });
});
