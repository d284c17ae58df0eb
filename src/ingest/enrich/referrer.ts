import { memoizeBounded } from './memo.js';

/** The source of traffic that came from nowhere else (or from the site itself). */
export const DIRECT = '(direct)';

const bareHost = (host: string): string => host.toLowerCase().replace(/\.$/, '').replace(/^www\./, '');

// Referrers and page hosts repeat from event to event; parsing a URL costs about a microsecond.
// Pure functions of their argument, so one bounded cache per process serves every app.
const referrerHost = memoizeBounded((referrer: string): string => {
  let url: URL;
  try {
    url = new URL(referrer.trim());
  } catch {
    return '';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? bareHost(url.hostname) : '';
}, 10_000);
const pageBareHost = memoizeBounded((pageHost: string) => bareHost(pageHost.replace(/:\d+$/, '')), 1000);

/** The external host a referrer URL points at, or null when it names none (or is unparsable). */
function externalHost(referrer: string | undefined, pageHost: string): string | null {
  if (!referrer) return null;
  const host = referrerHost(referrer);
  const page = pageBareHost(pageHost);
  if (!host || host === page || host.endsWith(`.${page}`)) return null;
  return host;
}

/**
 * Traffic source of an event: the referrer's host (lower case, without `www.`); else, when the
 * landing URL carries `utm_source`, that (lower case); else `(direct)`. A referrer counts only
 * when it is an http(s) URL on another site: the same host or any subdomain of `pageHost` is
 * internal navigation (pass the project's domain so every subdomain is covered). So an
 * external referrer beats `utm_source`, and `utm_source` names links that arrive without one
 * (apps, email clients, `noreferrer` links).
 */
export function referrerSource(referrer: string | undefined, pageHost: string, utmSource = ''): string {
  return externalHost(referrer, pageHost) ?? (utmSource.trim().toLowerCase() || DIRECT);
}

/** The five UTM parameters of a landing URL. */
export interface Utm {
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
}

const UTM_MAX_LENGTH = 200;

/** UTM parameters of `url`: trimmed, at most 200 characters, '' when absent. */
export function parseUtm(url: URL): Utm {
  const read = (key: string) => (url.searchParams.get(key) ?? '').trim().slice(0, UTM_MAX_LENGTH);
  return {
    utm_source: read('utm_source'),
    utm_medium: read('utm_medium'),
    utm_campaign: read('utm_campaign'),
    utm_term: read('utm_term'),
    utm_content: read('utm_content'),
  };
}
