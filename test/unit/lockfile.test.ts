import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));

describe('package-lock.json', () => {
  it("lists every optional platform package of chdb, so `npm ci` accepts the lock (run scripts/lock-platforms.mjs after npm install)", () => {
    const optional = Object.keys(lock.packages['node_modules/chdb'].optionalDependencies ?? {});
    expect(optional.length).toBeGreaterThan(0);
    const missing = optional.filter((name) => !lock.packages[`node_modules/${name}`]);
    expect(missing).toEqual([]);
  });
});
