import type { Deps } from './deps.js';
import type { AuthContext } from './auth/context.js';
import { CredentialCache } from './auth/key-cache.js';
import { RateLimiters } from './ratelimit.js';
import { IngestState } from './ingest/state.js';

/** Per-app services built once from the deps: caches and limiters live here, not in modules. */
export interface Services {
  deps: Deps;
  credentialCache: CredentialCache<AuthContext>;
  limiters: RateLimiters;
  /** Ingest caches, throttle and parsers (src/ingest). */
  ingest: IngestState;
}

export function createServices(deps: Deps): Services {
  return {
    deps,
    credentialCache: new CredentialCache<AuthContext>(),
    limiters: new RateLimiters(deps),
    ingest: new IngestState(deps),
  };
}
