/**
 * The formats of every record id the service makes, in one place: the generators use them to
 * make ids, the stores and routes use them to refuse anything else before it is put into a Redis
 * key. A request id that is not of its format is answered exactly as an unknown id, without a
 * Redis call, so a value shaped like a key suffix (`prj_…:members`) can never name another key.
 * Credentials (API keys, sessions, OAuth codes and tokens) have their own checksummed format in
 * `auth/tokens.ts`, checked there the same way.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random text over [0-9A-Za-z], uniformly distributed. */
export function randomBase62(length: number): string {
  const out: string[] = [];
  const bytes = new Uint8Array(length * 2);
  while (out.length < length) {
    crypto.getRandomValues(bytes);
    for (const b of bytes) {
      // 248 = 4 * 62: reject the tail to keep the alphabet uniform.
      if (b < 248 && out.length < length) out.push(BASE62[b % 62]!);
    }
  }
  return out.join('');
}

/** Every kind of record id: `<prefix>_<length base62 characters>`. */
export const ID_FORMATS = {
  account: { prefix: 'acc', length: 16 },
  apiKey: { prefix: 'key', length: 16 },
  project: { prefix: 'prj', length: 20 },
  alert: { prefix: 'alr', length: 16 },
  goal: { prefix: 'gol', length: 16 },
  funnel: { prefix: 'fnl', length: 16 },
  oauthClient: { prefix: 'cli', length: 22 },
  oauthGrant: { prefix: 'grt', length: 16 },
  csrf: { prefix: 'csrf', length: 24 },
} as const;

export type IdKind = keyof typeof ID_FORMATS;

const PATTERNS = Object.fromEntries(
  Object.entries(ID_FORMATS).map(([kind, f]) => [kind, new RegExp(`^${f.prefix}_[0-9A-Za-z]{${f.length}}$`)]),
) as Record<IdKind, RegExp>;

/** A new random id of the kind. */
export function newId(kind: IdKind): string {
  const { prefix, length } = ID_FORMATS[kind];
  return `${prefix}_${randomBase62(length)}`;
}

/** Whether `value` is an id of the kind, exactly (no I/O). */
export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && PATTERNS[kind].test(value);
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Whether `value` has the shape of a project domain as `normalizeDomain` stores it: lowercase
 * hostname labels (punycode for IDN), at least two, a non-numeric last label, at most 253
 * characters. A path `{domain}` that is not one cannot name a project.
 */
export function isProjectDomain(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 253) return false;
  const labels = value.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

/**
 * Whether `value` can be an account email as stored (the lowercased, trimmed address a valid
 * sign-up gave): anything else cannot name an account, and is not looked up.
 */
export function isEmailKey(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u.test(value);
}
