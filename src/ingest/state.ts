import type { Redis } from '@upstash/redis';
import { CredentialCache } from '../auth/key-cache.js';
import type { Deps } from '../deps.js';
import { canonicalIp } from '../projects/excluded-ips.js';
import { getProject, markInstallationSeen, ProjectKeys, type Project } from '../projects/store.js';
import { createBotDetector } from './enrich/bots.js';
import { createRdnsVerifier, type DnsResolver, type RdnsVerifier } from './enrich/bot-rdns.js';
import { createUaParser } from './enrich/user-agent.js';
import { createVisitorHasher } from './enrich/visitor.js';
import type { GeoLookup } from './geo.js';
import { IngestThrottle } from './throttle.js';
import { logError } from '../log.js';

/** Redis set of IPs whose events a project ignores (the owner's office, monitoring). */
export const excludedIpsKey = ProjectKeys.excludedIps;

/** Longest a deleted project's events are still accepted by a process that had it cached (≤ 5 s promised). */
export const PROJECT_CACHE_MS = 4000;

/**
 * Per-app ingest services: parsers, hasher, throttle and short-lived caches that keep Redis off
 * the hot path. Built once per app (see services.ts), never at module level.
 */
export class IngestState {
  readonly redis: Redis;
  readonly throttle: IngestThrottle;
  readonly hasher: ReturnType<typeof createVisitorHasher>;
  /** Browser, OS and device of a user agent (cached LRU inside the parser). */
  readonly parseUa = createUaParser();
  /** Crawler/bot of a user agent, cached per UA: `isbot`'s pattern was ~3% of the event path. */
  readonly detectBot = createBotDetector();
  // TTL caches (the generic one auth uses). A deleted project stops collecting within 4 s in every
  // process (the process that deletes it at once, see forgetProject); a new one is never cached
  // as missing. The TTL is counted from before the Redis read, so a read racing the deletion
  // cannot extend it.
  private readonly projects = new CredentialCache<Project>(PROJECT_CACHE_MS, 10_000);
  private readonly excluded = new CredentialCache<Set<string>>(5000, 10_000);
  private readonly installSeen = new Set<string>();

  constructor(private readonly deps: Omit<Deps, 'sink'>) {
    this.redis = deps.redis;
    this.hasher = createVisitorHasher(deps.redis);
    this.throttle = new IngestThrottle(
      deps.redis,
      { projectPerSec: deps.config.INGEST_PROJECT_PER_SEC, ipPerMin: deps.config.INGEST_IP_PER_MIN },
      { redisTimeoutMs: deps.config.INGEST_REDIS_TIMEOUT_MS },
    );
  }

  private rdnsVerifier?: { resolver: DnsResolver; verifier: RdnsVerifier };

  /** Reverse-DNS crawler verification over this runtime's resolver (Node), built on first use. */
  get rdns(): RdnsVerifier | undefined {
    const resolver = this.deps.dns;
    if (!resolver) return undefined;
    if (this.rdnsVerifier?.resolver !== resolver) this.rdnsVerifier = { resolver, verifier: createRdnsVerifier(resolver) };
    return this.rdnsVerifier.verifier;
  }

  /** IP geolocation of this runtime (MaxMind on Node), read at use so an entry point may attach it late. */
  get geo(): GeoLookup | undefined {
    return this.deps.geo;
  }

  /** The project a tracker `site` names, or null. Found projects are cached for a few seconds. */
  async project(id: string): Promise<Project | null> {
    const now = Date.now();
    const cached = this.projects.get(id, now);
    if (cached) return cached;
    const project = await getProject(this.redis, id);
    if (project) this.projects.set(id, project, now);
    return project;
  }

  /** Drops a project from the caches of this process (it was just deleted). */
  forgetProject(projectId: string): void {
    this.projects.delete(projectId);
    this.excluded.delete(projectId);
  }

  /** Whether events from `ip` are excluded for the project (set cached for a few seconds). */
  async isExcluded(projectId: string, ip: string): Promise<boolean> {
    if (!ip) return false;
    const now = Date.now();
    let set = this.excluded.get(projectId, now);
    if (!set) {
      set = new Set((await this.redis.smembers(excludedIpsKey(projectId))).map(String));
      this.excluded.set(projectId, set, now);
    }
    return set.size > 0 && set.has(canonicalIp(ip));
  }

  /** Drops the cached excluded set of a project, after it changed. */
  forgetExcluded(projectId: string): void {
    this.excluded.delete(projectId);
  }

  /** Records the first accepted event of a project once per process (Redis keeps the first time). */
  async markSeen(projectId: string, at: number): Promise<void> {
    if (this.installSeen.has(projectId)) return;
    try {
      await markInstallationSeen(this.redis, projectId, at);
      this.installSeen.add(projectId);
    } catch (err) {
      // The event itself is recorded; the next one tries again.
      logError(`[sightline] could not record installationSeenAt for ${projectId}`, err);
    }
  }
}
