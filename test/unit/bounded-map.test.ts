import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/adapters/bounded-map.js';
import { OpenFloors, openFloorKey } from '../../src/analysis/open-floors.js';

describe('BoundedMap', () => {
  it('keeps the newest entries up to its bound, a key set again counting as new', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    map.set('c', 4);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([3, undefined, 4]);
    map.delete('a');
    expect(map.get('a')).toBeUndefined();
  });
});

describe('OpenFloors', () => {
  it('keeps a floor per project, version, cut and floorless mark', () => {
    const floors = new OpenFloors(10);
    floors.set(openFloorKey('prj_a', 'v1', 3_600_000, null), 100);
    expect(floors.get(openFloorKey('prj_a', 'v1', 3_600_000, null))).toBe(100);
    for (const other of [openFloorKey('prj_b', 'v1', 3_600_000, null), openFloorKey('prj_a', 'v2', 3_600_000, null), openFloorKey('prj_a', 'v1', 7_200_000, null), openFloorKey('prj_a', 'v1', 3_600_000, 0)]) {
      expect(floors.get(other)).toBeUndefined();
    }
  });
});
