import type { MiddlewareHandler } from 'hono';
import { routePattern } from './route-pattern.js';

/**
 * The requests someone is waiting on right now (reports, dashboards, exports, the query API, MCP).
 * Bulk work that shares the process steps aside while there are any: an import parses its next
 * chunk only once they are answered or after a bounded wait (README "Where the computed time goes").
 */
export interface ReadsInFlight {
  /** Counts one read until the returned function is called (calling it again does nothing). */
  begin(): () => void;
  /** Resolves once no read is in flight, or after `maxMs`, whichever comes first. */
  settled(maxMs: number): Promise<void>;
  /** Reads in flight now. */
  readonly count: number;
}

/** A counter of reads in flight, shared by every app of the process (the entry point makes one). */
export function createReadsInFlight(): ReadsInFlight {
  let count = 0;
  let waiters: (() => void)[] = [];
  return {
    begin() {
      count++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        if (--count > 0) return;
        const waiting = waiters;
        waiters = [];
        for (const wake of waiting) wake();
      };
    },
    settled(maxMs) {
      if (count === 0) return Promise.resolve();
      return new Promise((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== wake);
          resolve();
        }, maxMs);
        waiters.push(wake);
      });
    },
    get count() {
      return count;
    },
  };
}

/** A route that reads though its method is one that writes elsewhere (a question sent as a POST body). */
export interface ReadRoute {
  method: string;
  /** Hono-style path, `:param` for one segment. */
  path: string;
}

/** Methods that only read. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * Counts each read request in `reads` while it is answered: GET and HEAD, and the POST routes in
 * `postedReads` (a question sent as a body). Writes (events, imports, settings) are not counted,
 * so two imports never wait on each other.
 */
export function countReads(reads: ReadsInFlight, postedReads: readonly ReadRoute[]): MiddlewareHandler {
  const posted = postedReads.map((r) => ({ method: r.method.toUpperCase(), re: routePattern(r.path) }));
  return async (c, next) => {
    const method = c.req.method.toUpperCase();
    if (!READ_METHODS.has(method) && !posted.some((r) => r.method === method && r.re.test(c.req.path))) return next();
    const end = reads.begin();
    try {
      await next();
    } finally {
      end();
    }
  };
}
