import { describe, expect, it } from 'vitest';
import { chTimestamp } from '../../src/ingest/insert.js';

/** The straightforward form chTimestamp must stay equal to. */
const viaIso = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
};

describe('chTimestamp', () => {
  it('formats like toISOString at day, second and millisecond edges and across years', () => {
    const edges = [0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, 951_782_400_000, 1_767_225_599_999, 253_402_300_799_999];
    for (const ms of edges) expect(chTimestamp(ms)).toBe(viaIso(ms));
    expect(chTimestamp(Date.UTC(2026, 1, 28, 23, 59, 59, 7))).toBe('2026-02-28 23:59:59.007');
  });

  it('matches toISOString for 20 000 random instants (the day cache changes every call)', () => {
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(Math.random() * 253_402_300_800_000);
      expect(chTimestamp(ms)).toBe(viaIso(ms));
    }
  });

  it('truncates fractional milliseconds as Date does and falls back outside years 0000–9999', () => {
    expect(chTimestamp(1_700_000_000_123.9)).toBe(viaIso(1_700_000_000_123));
    expect(chTimestamp(-1)).toBe(viaIso(-1));
    expect(chTimestamp(253_402_300_800_000)).toBe(viaIso(253_402_300_800_000));
  });
});
