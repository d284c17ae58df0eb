/**
 * Memoizes a pure string function in a bounded LRU owned by the returned function (so each
 * app owns its cache and nothing outlives it). Suited to user agents: a few hundred distinct
 * strings cover most traffic, while the bound caps memory under a flood of random ones.
 */
export function memoizeBounded<T>(fn: (key: string) => T, maxEntries: number): (key: string) => T {
  const cache = new Map<string, T>();
  return (key: string) => {
    if (cache.has(key)) {
      const hit = cache.get(key) as T;
      // Re-insert so the map's insertion order is recency order.
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const value = fn(key);
    cache.set(key, value);
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value as string);
    return value;
  };
}
