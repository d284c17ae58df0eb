import { Ratelimit } from '@upstash/ratelimit';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { clientIp } from './ingest/client-ip.js';
import type { AppEnv, Deps } from './deps.js';
import { ApiError, Messages, StoreUnavailableError } from './errors.js';
import { withinTime } from './adapters/event-loop.js';

/** The longest a rate-limit check waits for Redis before the request answers 503 (within the 1 s the README promises). */
const LIMIT_TIMEOUT_MS = 900;

/** The limits of the API; each is a sliding window over `RATE_LIMIT_WINDOW_SEC`. */
export type LimitName = 'api' | 'patch' | 'verify' | 'export' | 'auth';

const limitOf = (deps: Deps, name: LimitName): number =>
  ({
    api: deps.config.RATE_LIMIT_API_PER_MIN,
    patch: deps.config.RATE_LIMIT_PATCH_PER_MIN,
    verify: deps.config.RATE_LIMIT_VERIFY_PER_MIN,
    export: deps.config.RATE_LIMIT_EXPORT_PER_MIN,
    auth: deps.config.RATE_LIMIT_AUTH_PER_MIN,
  })[name];

/** One `@upstash/ratelimit` instance per limit, sharing the app's Redis. */
export class RateLimiters {
  private readonly limiters = new Map<LimitName, Ratelimit>();
  constructor(private readonly deps: Deps) {}

  get windowSeconds(): number {
    return this.deps.config.RATE_LIMIT_WINDOW_SEC;
  }

  limit(name: LimitName): number {
    return limitOf(this.deps, name);
  }

  /**
   * Counts one request of `identifier` against the `name` limit. Redis slower than LIMIT_TIMEOUT_MS
   * is an outage: StoreUnavailableError, which answers 503.
   */
  check(name: LimitName, identifier: string): ReturnType<Ratelimit['limit']> {
    return withinTime(this.limiterOf(name).limit(identifier), LIMIT_TIMEOUT_MS, () => {
      throw new StoreUnavailableError('rate limiter timed out');
    });
  }

  private limiterOf(name: LimitName): Ratelimit {
    let rl = this.limiters.get(name);
    if (!rl) {
      rl = new Ratelimit({
        redis: this.deps.redis,
        limiter: Ratelimit.slidingWindow(this.limit(name), `${this.windowSeconds} s`),
        prefix: `rl:${name}`,
        // Its own timeout (a plain timer race, which lets the request through) is off: `check` times
        // the call with withinTime, which reads the sockets once before it counts.
        timeout: 0,
        analytics: false,
        ephemeralCache: false,
      });
      this.limiters.set(name, rl);
    }
    return rl;
  }
}

/**
 * Whom a per-credential limit counts: the API key, else the account behind the session or
 * OAuth token (its `via` keeps the kinds apart).
 */
/** Per client address: for routes anyone may call (sign-in, client registration). */
export const byClientIp = (c: Context<AppEnv>): string => `ip:${clientIp(c, c.get('services').deps.config.TRUST_PROXY)}`;

export const byCredential = (c: Context<AppEnv>): string => c.get('auth').keyId ?? `${c.get('auth').via}:${c.get('auth').accountId}`;

/**
 * Sliding-window rate limit middleware. Sets IETF draft-10 `RateLimit-Policy`/`RateLimit`
 * headers on every limited response, and answers 429 with `Retry-After` when over.
 */
export const rateLimit = (name: LimitName, identify: (c: Context<AppEnv>) => string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { limiters } = c.get('services');
    const result = await limiters.check(name, identify(c));
    // The limiter keeps real time (Date.now), so its reset is compared with real time too.
    const msToReset = result.reset - Date.now();
    const policy = `"${name}";q=${result.limit};w=${limiters.windowSeconds}`;
    if (!result.success) {
      // A sliding window frees a slot at the latest 1 ms into the next window.
      const retryAfter = String(Math.max(1, Math.ceil((msToReset + 1) / 1000)));
      throw new ApiError(429, Messages.tooManyRequests, {
        'Retry-After': retryAfter,
        'RateLimit-Policy': policy,
        RateLimit: `"${name}";r=0;t=${retryAfter}`,
      });
    }
    const state = `"${name}";r=${result.remaining};t=${Math.max(0, Math.ceil(msToReset / 1000))}`;
    await next();
    c.res.headers.append('RateLimit-Policy', policy);
    c.res.headers.append('RateLimit', state);
  });
