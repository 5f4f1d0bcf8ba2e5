// utcDay keeps the current day's text (it is asked several times per call): it must still name the right
// UTC date on either side of every midnight, for any order of times, and for times before 1970.
import { describe, expect, it } from 'vitest';
import { utcDay } from '../../src/state/token-ledger.js';

const iso = (time: number) => new Date(time).toISOString().slice(0, 10);

describe('utcDay', () => {
  it('names the UTC date of a time, as toISOString does', () => {
    expect(utcDay(Date.UTC(2026, 11, 7, 23, 59, 59, 999))).toBe('2026-12-07');
    expect(utcDay(Date.UTC(2026, 11, 8))).toBe('2026-12-08');
    expect(utcDay(Date.UTC(2026, 11, 7, 23, 59, 59, 999))).toBe('2026-12-07');
  });

  it('agrees with toISOString around midnights, in any order, before 1970 too', () => {
    const midnights = [Date.UTC(2024, 1, 29), Date.UTC(1969, 11, 31), 0, Date.UTC(2026, 0, 1)];
    const times = midnights.flatMap((m) => [m - 1, m, m + 1, m + 43_200_000]);
    for (const time of [...times, ...times.reverse()]) expect(utcDay(time)).toBe(iso(time));
  });
});
