import { describe, expect, it } from 'vitest';
import { countryName, isCountryCode } from '../../src/ingest/enrich/countries.js';

describe('countryName', () => {
  it.each([
    ['US', 'United States'],
    ['DE', 'Germany'],
    ['JP', 'Japan'],
    ['GB', 'United Kingdom'],
    ['FR', 'France'],
    ['BR', 'Brazil'],
    ['IN', 'India'],
    ['AU', 'Australia'],
    ['KR', 'South Korea'],
    ['CH', 'Switzerland'],
    ['XK', 'Kosovo'],
    ['HK', 'Hong Kong'],
    ['MO', 'Macao'],
    ['MM', 'Myanmar'],
    ['de', 'Germany'],
    [' us ', 'United States'],
  ])('%j → %s', (code, name) => {
    expect(countryName(code)).toBe(name);
  });

  it.each(['', 'ZZ', 'EU', 'UN', 'XX', 'AA', 'QO', 'XA', 'T1', 'A1', 'USA', 'U', '12', 'ÜS'])('%j → empty', (code) => {
    expect(countryName(code)).toBe('');
  });
});

describe('isCountryCode', () => {
  it('accepts assigned upper-case alpha-2 codes', () => {
    for (const c of ['US', 'DE', 'JP', 'NZ', 'ZA', 'AQ', 'XK']) expect(isCountryCode(c), c).toBe(true);
  });

  it('rejects lower case, groupings, reserved and unassigned codes', () => {
    for (const c of ['us', 'ZZ', 'EU', 'EZ', 'UN', 'AC', 'IC', 'AA', 'QZ', 'XX', 'XB', 'AP', 'A1', '', 'USA', 'UK', 'SU', 'DD', 'YU', 'AN', 'FX'])
      expect(isCountryCode(c), c).toBe(false);
  });

  it('accepts exactly the 249 assigned ISO 3166-1 codes plus XK, each with a name', () => {
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const accepted = [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter(isCountryCode);
    for (const c of accepted) expect(countryName(c), c).not.toBe('');
    expect(accepted.length).toBe(250);
  });
});
