import { isbot } from 'isbot';
import { BOT_IP_RANGES } from './bot-ip-ranges.js';
import { rdnsSuffixesOf, type RdnsVerifier } from './bot-rdns.js';
import { createCidrMatcher, type CidrMatcher } from './cidr.js';
import { crawlerBySlug, findCrawler, type BotCategory } from './crawlers.js';
import { memoizeBounded } from './memo.js';

/** A detected bot; `operator` is set for crawlers the table knows. */
export interface BotInfo {
  slug: string;
  name: string;
  category: BotCategory;
  operator?: string;
}

/** A product token naming itself a bot ("SERankingBacklinksBot/1.0" → "SERankingBacklinksBot"). */
const BOT_TOKEN = /[a-z0-9_-]*bot[a-z0-9_-]*/i;
/** Tokens too generic to name anything ("…/robot.html" in a contact URL). */
const GENERIC_TOKENS = new Set(['bot', 'bots', 'robot', 'robots']);

function unknownBot(ua: string): BotInfo {
  const token = ua.match(BOT_TOKEN)?.[0];
  if (!token || GENERIC_TOKENS.has(token.toLowerCase())) return { slug: 'unknown-bot', name: 'Unknown bot', category: 'other' };
  const slug = token.toLowerCase().replace(/_/g, '-').slice(0, 64);
  return { slug, name: token.slice(0, 64), category: 'other' };
}

/**
 * Classifies a user agent as a bot, or null for a (presumed) human browser.
 * The crawler table is consulted first — its agents are bots whether or not `isbot` knows
 * them — then `isbot` decides for the rest, which land in `other` with a slug taken from the
 * UA. An empty UA is left to `isbot`, which does not call it a bot: the caller decides
 * what a request without a User-Agent means.
 */
export function detectBot(ua: string): BotInfo | null {
  const known = findCrawler(ua);
  if (known) return { slug: known.slug, name: known.name, category: known.category, operator: known.operator };
  return isbot(ua) ? unknownBot(ua) : null;
}

/**
 * `detectBot` behind a bounded per-app cache (default 5000 UAs): `isbot`'s large pattern costs
 * microseconds per UA, and traffic repeats a few hundred UAs.
 */
export function createBotDetector(opts: { maxEntries?: number } = {}): (ua: string) => BotInfo | null {
  // Frozen: one cached object is handed to every caller.
  return memoizeBounded((ua) => {
    const bot = detectBot(ua);
    return bot && Object.freeze(bot);
  }, opts.maxEntries ?? 5000);
}

const MATCHERS = new Map<string, CidrMatcher>(Object.entries(BOT_IP_RANGES).map(([key, cidrs]) => [key, createCidrMatcher(cidrs)]));

/**
 * Whether a request claiming to be bot `slug` really comes from its operator: Cloudflare's
 * verified-bot flag (`request.cf.verifiedBotCategory` present) counts, otherwise the IP must
 * lie in the operator's published ranges. Bots without published ranges are never verified here
 * (see verifyCrawler for reverse DNS).
 */
export function verifyBot(slug: string, ip: string, opts: { cfVerified?: boolean } = {}): boolean {
  if (opts.cfVerified) return true;
  const ranges = crawlerBySlug(slug)?.ranges;
  const matcher = ranges === undefined ? undefined : MATCHERS.get(ranges);
  return matcher !== undefined && matcher(ip);
}

/**
 * `verifyBot`, then, for operators that document reverse-DNS verification instead of (or beyond)
 * published ranges, a forward-confirmed reverse lookup when the runtime has a resolver (Node).
 */
export async function verifyCrawler(slug: string, ip: string, opts: { cfVerified?: boolean; rdns?: RdnsVerifier } = {}): Promise<boolean> {
  if (verifyBot(slug, ip, opts)) return true;
  const suffixes = rdnsSuffixesOf(slug);
  return suffixes !== undefined && opts.rdns !== undefined && (await opts.rdns.verify(ip, suffixes));
}
