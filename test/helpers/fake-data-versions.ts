import type { DataVersions } from '../../src/adapters/data-version.js';

/**
 * A DataVersions for narrow unit tests: the current version from `current`, a fixed closed-hours
 * version with no floorless mark nor latest-row stamp, and moves handed to `moved`.
 */
export function fakeDataVersions(current: () => string = () => 'v', moved: DataVersions['moved'] = async () => {}): DataVersions {
  const closedHours = { version: 'c', floorlessFrom: null };
  return {
    current: async () => current(),
    closedHours: async () => closedHours,
    both: async () => ({ current: current(), closedHours, latestRow: null }),
    markFloorless: async () => {},
    markLatestRow: async () => {},
    moved,
    forget: async () => {},
  };
}
