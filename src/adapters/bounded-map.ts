/**
 * A Map that keeps at most `maxEntries` keys, dropping the one set longest ago: for process-local
 * memos whose keys move on by themselves (a new hour, a new version), which must not grow without end.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  constructor(private readonly maxEntries: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Sets `key` as the newest entry. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
