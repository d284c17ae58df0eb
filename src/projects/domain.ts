import { isProjectDomain } from '../ids.js';

/** Why a domain was refused; the message is shown to the user. */
export class InvalidDomainError extends Error {}

/**
 * Normalizes what a user typed into the hostname a project is keyed by: trims, lowercases,
 * strips scheme, userinfo, port, path, query, fragment, trailing dot and a leading `www.`,
 * converts IDN to punycode, and refuses anything that is not a public-style hostname.
 */
export function normalizeDomain(input: string): string {
  let s = input.trim().toLowerCase();
  if (!s) throw new InvalidDomainError('domain is required');
  s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^\/\//, '');
  // Keep only the authority; URL() then drops userinfo and port and converts IDN labels.
  const authority = s.split(/[/?#\\]/, 1)[0];
  if (!authority || /\s/.test(authority)) throw new InvalidDomainError('domain is not a valid hostname');
  let host: string;
  try {
    host = new URL(`http://${authority}`).hostname;
  } catch {
    throw new InvalidDomainError('domain is not a valid hostname');
  }
  host = host.replace(/\.$/, '');
  if (host.startsWith('www.')) host = host.slice(4);
  if (!isProjectDomain(host)) throw new InvalidDomainError('domain is not a valid hostname');
  return host;
}

/** True when `host` is `domain` itself or one of its subdomains. */
export function hostBelongsTo(host: string, domain: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === domain || h.endsWith(`.${domain}`);
}
