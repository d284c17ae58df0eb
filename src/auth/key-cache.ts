/**
 * In-isolate cache of credential lookups (≤ 10 s), so a hot key costs no Redis round trip.
 * Revocation evicts here at once; other isolates see it within the TTL.
 */
export class CredentialCache<T> {
  private entries = new Map<string, { value: T; expires: number }>();
  constructor(private readonly ttlMs = 10_000, private readonly maxEntries = 10_000) {}

  get(hash: string, now: number): T | undefined {
    const hit = this.entries.get(hash);
    if (!hit) return undefined;
    if (hit.expires <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return hit.value;
  }

  set(hash: string, value: T, now: number): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { value, expires: now + this.ttlMs });
  }

  delete(hash: string): void {
    this.entries.delete(hash);
  }

  clear(): void {
    this.entries.clear();
  }
}
