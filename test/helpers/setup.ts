import { afterAll, beforeAll } from 'vitest';
import { closeHarness, createHarness, type Harness, type TestUser } from './harness.js';

/** The harness of one test file plus one account per requested name. */
export type FileHarness<N extends string> = { h: Harness } & Record<N, TestUser>;

/**
 * The lifecycle every integration file repeats: in beforeAll a harness (with `options`, e.g. a
 * fixed clock) and a fresh account per name; afterAll closes the harness. The returned object is
 * filled in by beforeAll, so read its fields only inside hooks and tests.
 */
export function useHarness<const N extends string>(
  names: readonly N[],
  options?: Parameters<typeof createHarness>[0],
): FileHarness<N> {
  const ctx = {} as FileHarness<N>;
  beforeAll(async () => {
    const h = await createHarness(options);
    const users = await Promise.all(names.map((name) => h.user(name)));
    Object.assign(ctx, { h }, Object.fromEntries(names.map((name, i) => [name, users[i]])));
  });
  afterAll(closeHarness);
  return ctx;
}
