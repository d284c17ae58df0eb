import { describe, expect, it } from 'vitest';
import { completedSpan, nextReportSlot, reportSlot } from '../../src/notify/report-periods.js';
import { formatDuration, pointChange, relativeChange } from '../../src/notify/format.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('email report slots (Monday / the 1st, 08:00 local)', () => {
  it('weekly in Asia/Kolkata (+5:30): the slot is Monday 02:30Z', () => {
    expect(iso(reportSlot('weekly', 'Asia/Kolkata', at('2026-03-16T02:29:00Z')))).toBe('2026-03-09T02:30:00.000Z');
    expect(iso(reportSlot('weekly', 'Asia/Kolkata', at('2026-03-16T02:30:00Z')))).toBe('2026-03-16T02:30:00.000Z');
    expect(iso(nextReportSlot('weekly', 'Asia/Kolkata', at('2026-03-16T02:30:00Z')))).toBe('2026-03-23T02:30:00.000Z');
    expect(iso(nextReportSlot('weekly', 'Asia/Kolkata', at('2026-03-16T02:29:59Z')))).toBe('2026-03-16T02:30:00.000Z');
  });

  it('weekly spans are Monday to Sunday local, and the week before', () => {
    const span = completedSpan('weekly', 'America/St_Johns', at('2026-03-18T12:00:00Z'));
    // St John's is UTC−2:30 after 8 March 2026 (DST), UTC−3:30 before.
    expect([iso(span.from), iso(span.to), iso(span.previousFrom), iso(span.previousTo)]).toEqual([
      '2026-03-09T02:30:00.000Z',
      '2026-03-16T02:30:00.000Z',
      '2026-03-02T03:30:00.000Z',
      '2026-03-09T02:30:00.000Z',
    ]);
  });

  it('a week holding a DST change is 167 hours long', () => {
    const span = completedSpan('weekly', 'Europe/Berlin', at('2026-04-01T12:00:00Z'));
    expect((span.to - span.from) / 3_600_000).toBe(167);
  });

  it('monthly: the 1st at 08:00 local, the whole month before and the one before it', () => {
    expect(iso(reportSlot('monthly', 'Pacific/Auckland', at('2026-03-01T12:00:00Z')))).toBe('2026-02-28T19:00:00.000Z');
    expect(iso(nextReportSlot('monthly', 'UTC', at('2026-12-01T08:00:00Z')))).toBe('2027-01-01T08:00:00.000Z');
    const span = completedSpan('monthly', 'UTC', at('2026-03-01T08:00:00Z'));
    expect([iso(span.from), iso(span.to), iso(span.previousFrom)]).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  });
});

describe('email number formatting', () => {
  it('words changes as Plausible does: percent for counts, points for rates', () => {
    expect(relativeChange(120, 100).text).toBe('+20%');
    expect(relativeChange(80, 100)).toEqual({ text: '\u221220%', trend: 'down' });
    expect(relativeChange(5, 0).text).toBe('new');
    expect(relativeChange(0, 0).text).toBe('0%');
    expect(relativeChange(null, 3).text).toBe('—');
    expect(pointChange(0.42, 0.4).text).toBe('+2 pp');
    expect(pointChange(0.4, 0.42).text).toBe('\u22122 pp');
  });

  it('formats durations', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(42.4)).toBe('42s');
    expect(formatDuration(83)).toBe('1m 23s');
    expect(formatDuration(3725)).toBe('1h 02m');
  });
});
