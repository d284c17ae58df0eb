import { BoundedMap } from '../adapters/bounded-map.js';

/**
 * How narrow a recent slice last held a project's `limit` latest visitors (an index into the
 * visitors list's slice spans, src/reports/defs/visitors.ts), as this process saw it, so that a
 * busy site's next list reads the narrowest slice likely to hold them. Only a guess: the list
 * still checks that the slice held `limit` visitors and otherwise looks wider.
 */
export class VisitorSlices extends BoundedMap<string, number> {
  /** Slice indexes under visitorSliceKey keys; the oldest dropped past `maxEntries`. */
  constructor(maxEntries = 10_000) {
    super(maxEntries);
  }
}

/** Whom a remembered slice is for: a project's lists of `limit` visitors. */
export const visitorSliceKey = (projectId: string, limit: number): string => `${projectId}:${limit}`;
