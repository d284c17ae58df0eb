import * as v from 'valibot';

const intFrom = (name: string, fallback: number, min = 1) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform((s) => (s.trim() === '' ? String(fallback) : s.trim())),
    v.check((s) => /^\d+$/.test(s), `${name} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${name} must be at least ${min}`),
  );

/** A switch: `1`/`true`/`yes` or `0`/`false`/`no` (any case); empty or unset is `fallback`. */
const flagFrom = (name: string, fallback: boolean) =>
  v.pipe(
    v.optional(v.string(), ''),
    v.transform((s) => s.trim().toLowerCase()),
    v.picklist(['1', '0', 'true', 'false', 'yes', 'no', ''], `${name} must be true or false`),
    v.transform((s) => (s === '' ? fallback : s === '1' || s === 'true' || s === 'yes')),
  );

const urlFrom = (name: string) =>
  v.optional(v.pipe(v.string(), v.trim(), v.url(`${name} must be a URL`)));

/** Every environment variable the service reads, with its default. */
export const ConfigSchema = v.object({
  PORT: intFrom('PORT', 8787),
  /** Address the Node server binds (0.0.0.0: every interface). */
  HOST: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'HOST must not be empty')), '0.0.0.0'),
  DATA_DIR: v.optional(v.string(), './data'),
  PUBLIC_URL: urlFrom('PUBLIC_URL'),
  REDIS_URL: v.optional(
    v.pipe(v.string(), v.regex(/^rediss?:\/\//, 'REDIS_URL must start with redis:// or rediss://')),
    'redis://127.0.0.1:6379',
  ),
  UPSTASH_REDIS_REST_URL: urlFrom('UPSTASH_REDIS_REST_URL'),
  UPSTASH_REDIS_REST_TOKEN: v.optional(v.string()),
  CLICKHOUSE_URL: urlFrom('CLICKHOUSE_URL'),
  CLICKHOUSE_USER: v.optional(v.string(), 'default'),
  CLICKHOUSE_PASSWORD: v.optional(v.string(), ''),
  CLICKHOUSE_DATABASE: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'CLICKHOUSE_DATABASE must be an identifier')),
    'default',
  ),
  RATE_LIMIT_API_PER_MIN: intFrom('RATE_LIMIT_API_PER_MIN', 600),
  RATE_LIMIT_PATCH_PER_MIN: intFrom('RATE_LIMIT_PATCH_PER_MIN', 30),
  RATE_LIMIT_VERIFY_PER_MIN: intFrom('RATE_LIMIT_VERIFY_PER_MIN', 10),
  RATE_LIMIT_EXPORT_PER_MIN: intFrom('RATE_LIMIT_EXPORT_PER_MIN', 10),
  /** Password checks and OAuth client registrations per client address (brute force, spam). */
  RATE_LIMIT_AUTH_PER_MIN: intFrom('RATE_LIMIT_AUTH_PER_MIN', 10),
  /** Window of every API rate limit, in seconds (the per-minute names assume 60). */
  RATE_LIMIT_WINDOW_SEC: intFrom('RATE_LIMIT_WINDOW_SEC', 60),
  INGEST_IP_PER_MIN: intFrom('INGEST_IP_PER_MIN', 6000),
  INGEST_PROJECT_PER_SEC: intFrom('INGEST_PROJECT_PER_SEC', 20000),
  /** A throttle answer from Redis slower than this counts as an outage: the in-process counters decide (a far Redis wants more). */
  INGEST_REDIS_TIMEOUT_MS: intFrom('INGEST_REDIS_TIMEOUT_MS', 50),
  RETENTION_DAYS: intFrom('RETENTION_DAYS', 1095),
  /**
   * Lets webhooks reach loopback, private and other non-public addresses: for local testing only
   * (otherwise a tenant could make the server call its own network or the cloud metadata service).
   */
  WEBHOOK_ALLOW_PRIVATE: flagFrom('WEBHOOK_ALLOW_PRIVATE', false),
  /**
   * On the embedded engine, a read asked while another runs goes beside it on a connection of its
   * own, its values carried as rows (README "Reads beside the chain"). Off: reads wait their turn.
   */
  EMBEDDED_READS_BESIDE: flagFrom('EMBEDDED_READS_BESIDE', true),
  /**
   * Worker threads that parse imports on Node; 0 parses in the request thread. Unset: two fewer
   * than the cores, at most 4 (on two cores the engine needs them: workers cost ~15% more CPU there
   * for no gain in throughput).
   */
  IMPORT_WORKERS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d*$/, 'IMPORT_WORKERS must be a whole number'),
      v.transform((s) => (s === '' ? undefined : Number(s))),
    ),
  ),
  /**
   * Longest an accepted event waits in the Node buffer, in ms. Each insert pays a fixed cost per
   * rollup view, so in the ingest benchmark 5 s batches cost a third of the engine CPU per event of 1 s ones.
   */
  INGEST_FLUSH_MS: intFrom('INGEST_FLUSH_MS', 5000, 10),
  /**
   * Minutes a report question stays kept fresh after it was last asked (Node): after each write of its
   * project the answer is computed again in the background, so the next viewer is served. 0 turns it off.
   */
  ANSWER_REFRESH_MIN: intFrom('ANSWER_REFRESH_MIN', 10, 0),
  /** DNS servers for reverse-DNS crawler verification on Node (`1.1.1.1,8.8.8.8:53`); the system's when unset. */
  DNS_SERVERS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^$|^[0-9a-fA-F.:[\]]+(,\s*[0-9a-fA-F.:[\]]+)*$/, 'DNS_SERVERS must be a comma-separated list of IP[:port]'),
    ),
  ),
  /** Seconds between two runs of the periodic jobs (exports, email reports, alerts) on Node; Workers use the cron. */
  JOBS_INTERVAL_SEC: intFrom('JOBS_INTERVAL_SEC', 60),
  /** SMTP server of outgoing email on Node (`smtp://user:pass@host:587`, `smtps://…:465`); without it email is off. */
  SMTP_URL: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^$|^smtps?:\/\/[^\s]+$/, 'SMTP_URL must start with smtp:// or smtps://'), v.transform((s) => s || undefined)),
  ),
  /** From address of every email (`Sightline <reports@example.com>` or a bare address). */
  SMTP_FROM: v.optional(v.pipe(v.string(), v.trim(), v.minLength(3, 'SMTP_FROM must be an email address')), 'Sightline <noreply@localhost>'),
  /** Workers: JSON email API endpoint (Resend-style `POST {from,to,subject,text,html,headers}`); without it email is off there. */
  EMAIL_API_URL: urlFrom('EMAIL_API_URL'),
  /** Workers: Bearer token of EMAIL_API_URL. */
  EMAIL_API_KEY: v.optional(v.string()),
  /** Key of the signed unsubscribe links; when unset a random one is kept in Redis (shared by every process). */
  UNSUBSCRIBE_SECRET: v.optional(v.pipe(v.string(), v.minLength(16, 'UNSUBSCRIBE_SECRET must be at least 16 characters'))),
  /**
   * How many proxies we run in front of the service (0: none, the socket's address is the client).
   * With n the client is the n-th X-Forwarded-For entry from the right (src/ingest/client-ip.ts).
   * `true`/`yes` mean 1, `false`/`no`/empty 0, as before the count was taken.
   */
  TRUST_PROXY: v.pipe(
    v.optional(v.string(), '0'),
    v.transform((s) => s.trim().toLowerCase()),
    v.transform((s) => (s === 'true' || s === 'yes' ? '1' : s === 'false' || s === 'no' || s === '' ? '0' : s)),
    v.regex(/^\d{1,2}$/, 'TRUST_PROXY must be the number of trusted proxy hops (0–99), or true/false'),
    v.transform(Number),
  ),
});

export type Config = v.InferOutput<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The message of a refused variable: it names the variable and never repeats the value (a URL or
 * token may be a secret, and this text is logged). Our messages name the variable; a message that
 * does not, or that quotes the value (valibot's defaults do), becomes "<NAME> is invalid".
 */
function safeMessage(issue: v.BaseIssue<unknown>): string {
  const key = String(issue.path?.[0]?.key ?? 'a variable');
  const value = typeof issue.input === 'string' ? issue.input.trim() : '';
  const ours = issue.message.startsWith(key) && (value.length < 3 || !issue.message.includes(value));
  return ours ? issue.message : `${key} is invalid`;
}

/**
 * Parses the environment once at start. A bad value throws a ConfigError whose message names
 * the variable, so the entry point can stop with it.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const known = Object.fromEntries(
    Object.keys(ConfigSchema.entries)
      .filter((k) => env[k] !== undefined)
      .map((k) => [k, env[k]]),
  );
  const result = v.safeParse(ConfigSchema, known);
  if (result.success) {
    const cfg = result.output;
    if (cfg.UPSTASH_REDIS_REST_URL && !cfg.UPSTASH_REDIS_REST_TOKEN) {
      throw new ConfigError('UPSTASH_REDIS_REST_TOKEN is required when UPSTASH_REDIS_REST_URL is set');
    }
    return cfg;
  }
  throw new ConfigError(`Invalid configuration: ${safeMessage(result.issues[0])}`);
}
