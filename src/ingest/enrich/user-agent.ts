import UAParser from 'ua-parser-js';
import { memoizeBounded } from './memo.js';

/** The device classes the reports know (contract: devices report). */
export type DeviceClass = 'Mobile' | 'Desktop' | 'Tablet' | 'Unknown';

/** Browser, OS and device of one user agent; names are 'Unknown' and versions '' when unknown. */
export interface ParsedUserAgent {
  browser: string;
  /** Major version only ("120", "17"): finer versions would fragment the browsers report. */
  browserVersion: string;
  os: string;
  /** At most two components ("17.2", "10.15", "14"). */
  osVersion: string;
  device: DeviceClass;
}

const UNKNOWN: ParsedUserAgent = Object.freeze({
  browser: 'Unknown',
  browserVersion: '',
  os: 'Unknown',
  osVersion: '',
  device: 'Unknown',
});

/**
 * Naming rule: device class is its own dimension, so the browser name does not repeat it —
 * ua-parser's "Mobile Safari", "Mobile Chrome" and "Mobile Firefox" become "Safari", "Chrome"
 * and "Firefox" (any "Mobile " prefix is dropped). Terse parser names get their product name.
 */
const BROWSER_NAMES: Record<string, string> = {
  IE: 'Internet Explorer',
  GSA: 'Google App',
  UCBrowser: 'UC Browser',
  'Chrome Headless': 'Headless Chrome',
  'Opera Mobi': 'Opera',
};

/** Linux distributions collapse into "Linux": a distro is not a platform a site owner targets. */
const LINUX_DISTROS = new Set([
  'Arch', 'CentOS', 'Debian', 'Deepin', 'elementary OS', 'Fedora', 'Gentoo', 'Kubuntu', 'Linpus',
  'Linux', 'Lubuntu', 'Mageia', 'Mandriva', 'Manjaro', 'Mint', 'openSUSE', 'PCLinuxOS', 'Pop!_OS',
  'RedHat', 'Red Hat', 'Slackware', 'SUSE', 'Ubuntu', 'Xubuntu', 'Zenwalk',
]);

const OS_NAMES: Record<string, string> = {
  'Chromium OS': 'Chrome OS',
  KAIOS: 'KaiOS',
  'Mac OS': 'macOS',
};

/** Operating systems that only run on desktop-class machines: no device type means Desktop. */
const DESKTOP_OS = new Set(['Windows', 'macOS', 'Linux', 'Chrome OS', 'FreeBSD', 'OpenBSD', 'NetBSD', 'Solaris']);

const browserName = (name: string | undefined): string => {
  if (!name) return 'Unknown';
  const mapped = BROWSER_NAMES[name] ?? name;
  return mapped.startsWith('Mobile ') ? mapped.slice('Mobile '.length) : mapped;
};

const osName = (name: string | undefined): string => {
  if (!name) return 'Unknown';
  if (LINUX_DISTROS.has(name)) return 'Linux';
  return OS_NAMES[name] ?? name;
};

const twoComponents = (version: string | undefined): string => (version ? version.split('.').slice(0, 2).join('.') : '');

/** Browsers that exist only on phones, for UAs that name no device (Opera Mini's proxy UA). */
const PHONE_ONLY_BROWSERS = new Set(['Opera Mini']);

const deviceClass = (type: string | undefined, os: string, browser: string): DeviceClass => {
  if (type === 'mobile' || (type === undefined && PHONE_ONLY_BROWSERS.has(browser))) return 'Mobile';
  if (type === 'tablet') return 'Tablet';
  // Consoles, TVs, wearables, XR and embedded devices are not a class the reports show.
  if (type === undefined && DESKTOP_OS.has(os)) return 'Desktop';
  return 'Unknown';
};

/**
 * Parses with a caller-owned ua-parser instance (reusing one skips its per-call setup).
 * iPads in "desktop site" mode send a Mac UA and are reported as Desktop/macOS: the string
 * carries nothing that tells them apart.
 */
function parseWith(parser: UAParser, ua: string): ParsedUserAgent {
  if (!ua.trim()) return UNKNOWN;
  // Only the three parts we use: engine and CPU detection would add a third to the cost.
  parser.setUA(ua);
  const b = parser.getBrowser();
  const o = parser.getOS();
  const os = osName(o.name);
  const browser = browserName(b.name);
  return Object.freeze({
    browser,
    browserVersion: b.name ? (b.major ?? '') : '',
    os,
    osVersion: o.name ? twoComponents(o.version) : '',
    device: deviceClass(parser.getDevice().type, os, browser),
  });
}

/** ua-parser ignores everything past its own limit (500 chars); the cache keys on the same prefix. */
const UA_MAX_LENGTH = 500;

/**
 * Creates a cached user-agent parser: a bounded LRU (default 5000 UAs) owned by the returned
 * function, one per app, so each distinct UA is parsed once.
 */
export function createUaParser(opts: { maxEntries?: number } = {}): (ua: string) => ParsedUserAgent {
  const parser = new UAParser();
  const cached = memoizeBounded((key) => parseWith(parser, key), opts.maxEntries ?? 5000);
  return (ua: string) => cached(ua.length > UA_MAX_LENGTH ? ua.slice(0, UA_MAX_LENGTH) : ua);
}

/** Uncached parse of one user agent; prefer `createUaParser()` on hot paths. */
export function parseUserAgent(ua: string): ParsedUserAgent {
  return parseWith(new UAParser(), ua.slice(0, UA_MAX_LENGTH));
}
