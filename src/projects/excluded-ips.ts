import type { Redis } from '@upstash/redis';
import { ProjectKeys } from './store.js';

/** A project excludes at most this many addresses. */
export const MAX_EXCLUDED_IPS = 100;

/**
 * One spelling per address, so a stored exclusion matches however a client or proxy writes it:
 * IPv6 lower-cased and compressed (the URL parser's canonical form), IPv4 as is.
 */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** The project's excluded addresses, sorted. */
export async function listExcludedIps(redis: Redis, projectId: string): Promise<string[]> {
  return (await redis.smembers(ProjectKeys.excludedIps(projectId))).map(String).sort();
}

/** Replaces the project's excluded addresses (canonical forms) in one transaction. */
export async function replaceExcludedIps(redis: Redis, projectId: string, ips: readonly string[]): Promise<string[]> {
  const unique = [...new Set(ips.map(canonicalIp))].sort();
  const key = ProjectKeys.excludedIps(projectId);
  const tx = redis.multi();
  tx.del(key);
  if (unique.length > 0) tx.sadd(key, unique[0]!, ...unique.slice(1));
  await tx.exec();
  return unique;
}
