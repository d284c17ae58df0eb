/**
 * Memoizes a pure string function in a bounded cache owned by the returned function (so each
 * app owns its cache and nothing outlives it). Suited to user agents, referrers, ids: a few
 * hundred distinct strings cover most traffic, while the bound caps memory under a flood of
 * random ones.
 *
 * Two generations approximate LRU without touching the map on a hit (a delete and re-insert
 * per hit cost more than the lookups it saved at a million ids): when the young map holds
 * `maxEntries / 2` keys it becomes the old one, and the previous old one is dropped; a key
 * found only in the old map moves back to the young one.
 */
export function memoizeBounded<T>(fn: (key: string) => T, maxEntries: number): (key: string) => T {
  const half = Math.max(1, Math.floor(maxEntries / 2));
  let young = new Map<string, T>();
  let old = new Map<string, T>();
  const remember = (key: string, value: T) => {
    if (young.size >= half) {
      old = young;
      young = new Map();
    }
    young.set(key, value);
  };
  return (key: string) => {
    let value = young.get(key);
    if (value !== undefined || young.has(key)) return value as T;
    value = old.get(key);
    if (value === undefined && !old.has(key)) value = fn(key);
    remember(key, value as T);
    return value as T;
  };
}
