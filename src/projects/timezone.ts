/**
 * The IANA name to store for a zone, or null when the runtime does not know it. The user's
 * spelling is kept (ICU would turn Asia/Kolkata into the legacy Asia/Calcutta); only the
 * letter case is taken from the runtime when that is all that differs.
 */
export function canonicalTimeZone(zone: string): string | null {
  if (!zone || zone.length > 64) return null;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
  } catch {
    return null;
  }
}
