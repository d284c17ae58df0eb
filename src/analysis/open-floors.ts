import { BoundedMap } from '../adapters/bounded-map.js';

/**
 * The open sessions' floor (plan.ts OPEN_FLOOR: no event of a session open at the cut is older)
 * as this process measured it, per project, closed-hours version, cut and floorless mark, so that
 * reads of the open visits bind it instead of summing the events since openFrom in a scalar
 * subquery, which the engine runs alone before the rest of the statement (README "Visits of
 * closed hours"). A measured floor (at most openFrom, plan.ts OPEN_FLOOR_SQL) stays a lower bound
 * while its key holds: a session open later is either one of those measured (its floor was counted)
 * or began after the measurement, and then, unless the write moved the closed-hours version, its
 * events are stamped at or after the cut, so its floor (its first event less the idle time) is no
 * earlier than openFrom; events that could join an older session come only with such writes too.
 */
export class OpenFloors extends BoundedMap<string, number> {
  /** Floors under openFloorKey keys, epoch ms; the oldest dropped past `maxEntries`. */
  constructor(maxEntries = 10_000) {
    super(maxEntries);
  }
}

/** What a measured floor holds for: the project, its closed-hours version, the cut and the floorless mark (null: not measured). */
export const openFloorKey = (projectId: string, version: string, cut: number, floorlessFrom: number | null): string =>
  `${projectId}:${version}:${cut}:${floorlessFrom ?? ''}`;

/**
 * What the floor of a compared range's window of open sessions (closed-hours.ts partsOf `window`)
 * holds for: the project, its closed-hours version and the window's cut. Its events are all before
 * the closed hours end, so it holds while the version does.
 */
export const windowFloorKey = (projectId: string, version: string, cut: number): string => `${projectId}:${version}:${cut}:window`;
