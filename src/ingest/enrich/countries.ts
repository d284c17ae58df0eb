/** CLDR's English region names; built once (immutable) because construction is the slow part. */
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** Shorter everyday names where CLDR's long form reads oddly in a report. */
const OVERRIDES: Record<string, string> = { HK: 'Hong Kong', MO: 'Macao', MM: 'Myanmar' };

/**
 * Two-letter region codes CLDR names that are not ISO 3166-1 countries: groupings (EU, EZ, UN),
 * unknown (ZZ), exceptionally reserved codes (AC, CP, CQ, DG, EA, IC, TA) and the user-assigned
 * ranges (AA, QM–QZ, XA–XZ) — except XK, which geo databases use for Kosovo.
 */
const NOT_COUNTRIES = /^(?:EU|EZ|UN|ZZ|AC|CP|CQ|DG|EA|IC|TA|AA|Q[M-Z]|X[A-JL-Z])$/;

/** Withdrawn codes (DD, SU, YU, UK…) that CLDR still names: Intl canonicalizes them to another code. */
const isCanonical = (code: string): boolean => new Intl.Locale(`und-${code}`).region === code;

const countryCodes = new Map<string, boolean>();

/** Whether `code` is an ISO 3166-1 alpha-2 country code (upper case, as stored). */
export function isCountryCode(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code) || NOT_COUNTRIES.test(code)) return false;
  // Intl.Locale construction is slow and geo lookups ask per event; at most 26² answers to keep.
  let known = countryCodes.get(code);
  if (known === undefined) {
    known = REGION_NAMES.of(code) !== undefined && isCanonical(code);
    countryCodes.set(code, known);
  }
  return known;
}

/** English name of an ISO 3166-1 alpha-2 code (any case); '' for anything else. */
export function countryName(code: string): string {
  const upper = code.trim().toUpperCase();
  if (!isCountryCode(upper)) return '';
  return OVERRIDES[upper] ?? REGION_NAMES.of(upper) ?? '';
}
