import { sqlString } from '../adapters/clickhouse.js';

/**
 * Channels: GA4's default channel grouping (support.google.com/analytics/answer/9756891) over a
 * visit's source and UTM values, once as ClickHouse SQL (`channelSql`) and once in TypeScript
 * (`channelOf`). Both are read from the one ordered rule table below, so they cannot drift apart.
 *
 * Where we differ from GA4, and why:
 * - No Cross-network, Paid/Organic Shopping, Audio, SMS or Mobile Push channels: shopping
 *   campaigns count as Referral, the others as Other. Paid and organic video are both Video.
 *   GA4's Paid Other is Other.
 * - Ingest records no medium for plain referrer traffic, where GA4 records `referral`: a visit
 *   with a source but no medium is Referral. A medium no rule knows is Other (GA4: Unassigned).
 * - The source a rule sees is `utm_source` when the landing URL had one, else the referring host
 *   (GA4 also prefers the campaign's source to the referrer).
 * - news.ycombinator.com is a social site (GA4's own list has it there).
 */

export const CHANNELS = [
  'Direct',
  'Organic Search',
  'Paid Search',
  'Organic Social',
  'Paid Social',
  'Email',
  'Referral',
  'Affiliates',
  'Display',
  'Video',
  'Other',
] as const;
export type Channel = (typeof CHANNELS)[number];

type SiteKind = 'search' | 'social' | 'video';

/**
 * Known sites of each kind. `names` are matched whole (what a `utm_source` says: `google`, `fb`),
 * `hosts` whole or as a subdomain (`m.facebook.com`, `de.search.yahoo.com`), `brands` under any
 * top-level domain (`google.de`, `google.co.uk`, `google.com.br`) but not their subdomains, so
 * `mail.google.com` stays a referrer. Only `[a-z0-9.-]`: they are written into regexes.
 */
const SITES: Readonly<Record<SiteKind, { names: readonly string[]; hosts: readonly string[]; brands: readonly string[] }>> = {
  search: {
    names: ['google', 'bing', 'duckduckgo', 'yahoo', 'yandex', 'baidu', 'ecosia', 'brave', 'qwant', 'startpage', 'naver', 'seznam', 'ask', 'aol', 'sogou', 'kagi'],
    hosts: [
      'bing.com', 'duckduckgo.com', 'search.yahoo.com', 'yahoo.co.jp', 'baidu.com', 'ecosia.org', 'search.brave.com', 'qwant.com',
      'startpage.com', 'search.naver.com', 'seznam.cz', 'ask.com', 'search.aol.com', 'sogou.com', 'so.com', 'kagi.com', 'presearch.com',
      'search.yahoo.co.jp', 'mojeek.com',
    ],
    brands: ['google', 'bing', 'yandex'],
  },
  social: {
    names: [
      'facebook', 'fb', 'instagram', 'ig', 'twitter', 'x', 'linkedin', 'reddit', 'pinterest', 'tiktok', 'snapchat', 'threads', 'mastodon',
      'bluesky', 'whatsapp', 'telegram', 'discord', 'tumblr', 'quora', 'vk', 'weibo', 'hackernews',
    ],
    hosts: [
      'facebook.com', 'fb.com', 'fb.me', 'messenger.com', 'instagram.com', 't.co', 'x.com', 'twitter.com', 'linkedin.com', 'lnkd.in',
      'reddit.com', 'redd.it', 'news.ycombinator.com', 'pinterest.com', 'pin.it', 'tiktok.com', 'snapchat.com', 'threads.net', 'bsky.app',
      'mastodon.social', 'whatsapp.com', 'wa.me', 't.me', 'telegram.org', 'discord.com', 'discord.gg', 'tumblr.com', 'quora.com', 'vk.com',
      'ok.ru', 'weibo.com', 'line.me', 'xing.com', 'medium.com', 'lobste.rs',
    ],
    brands: ['pinterest'],
  },
  video: {
    names: ['youtube', 'vimeo', 'twitch', 'dailymotion', 'wistia', 'rumble', 'bilibili'],
    hosts: ['youtube.com', 'youtu.be', 'vimeo.com', 'twitch.tv', 'dailymotion.com', 'wistia.com', 'rumble.com', 'bilibili.com', 'youku.com', 'iqiyi.com', 'ted.com'],
    brands: [],
  },
};

/** Values of the exact-match rules (compared after ASCII lower-casing). */
const VALUES = {
  direct: ['(direct)', ''],
  paidMedium: ['ppc', 'retargeting'],
  display: ['display', 'banner', 'expandable', 'interstitial', 'cpm'],
  socialMedium: ['social', 'social-network', 'social-media', 'sm', 'social network', 'social media'],
  referralMedium: ['referral', 'app', 'link'],
  email: ['email', 'e-mail', 'e_mail', 'e mail'],
  otherSource: ['sms', 'firebase'],
  otherMedium: ['audio', 'sms'],
} as const;

/** GA4's shopping campaign pattern: `shop` at the start or after a non-letter (or `e`: `eshop`), or `shopping` anywhere. */
const SHOP_CAMPAIGN = '(?:^|[^a-df-z])shop|shopping';

const alternatives = (items: readonly string[]) => items.map((s) => s.replaceAll('.', '[.]')).join('|');

function siteRegex(kind: SiteKind): string {
  const { names, hosts, brands } = SITES[kind];
  const parts = [`^(?:${alternatives([...names, ...hosts])})$`, `[.](?:${alternatives(hosts)})$`];
  if (brands.length) parts.push(`^(?:${alternatives(brands)})[.](?:com?[.])?[a-z]{2,}$`);
  return parts.join('|');
}

for (const site of Object.values(SITES)) {
  for (const entry of [...site.names, ...site.hosts, ...site.brands]) {
    if (!/^[a-z0-9.-]+$/.test(entry)) throw new Error(`channel site list entry must be [a-z0-9.-]: ${entry}`);
  }
}

type Field = 'source' | 'medium' | 'campaign';
/** A rule's condition over the lower-cased source, medium and campaign. */
type Cond =
  | { field: Field; oneOf: readonly string[] }
  | { field: Field; contains: string }
  | { field: Field; startsWith: string }
  | { field: Field; endsWith: string }
  | { field: Field; regex: string }
  | { all: readonly Cond[] }
  | { any: readonly Cond[] };

const site = (kind: SiteKind): Cond => ({ field: 'source', regex: siteRegex(kind) });
/** GA4's paid medium: `^(.*cp.*|ppc|retargeting|paid.*)$`, as string tests (no `.` whose newline handling differs between engines). */
const PAID: Cond = { any: [{ field: 'medium', contains: 'cp' }, { field: 'medium', oneOf: VALUES.paidMedium }, { field: 'medium', startsWith: 'paid' }] };
const SHOP: Cond = { field: 'campaign', regex: SHOP_CAMPAIGN };

/** GA4's rules in GA4's order, mapped onto our channels; the first that holds wins. */
const RULES: readonly (readonly [Cond, Channel])[] = [
  [{ all: [{ field: 'source', oneOf: VALUES.direct }, { field: 'medium', oneOf: [''] }] }, 'Direct'],
  [{ all: [SHOP, PAID] }, 'Referral'],
  [{ all: [site('search'), PAID] }, 'Paid Search'],
  [{ all: [site('social'), PAID] }, 'Paid Social'],
  [{ all: [site('video'), PAID] }, 'Video'],
  [{ field: 'medium', oneOf: VALUES.display }, 'Display'],
  [PAID, 'Other'],
  [SHOP, 'Referral'],
  [{ any: [site('social'), { field: 'medium', oneOf: VALUES.socialMedium }] }, 'Organic Social'],
  [{ any: [site('video'), { field: 'medium', contains: 'video' }] }, 'Video'],
  [{ any: [site('search'), { field: 'medium', oneOf: ['organic'] }] }, 'Organic Search'],
  [{ field: 'medium', oneOf: VALUES.referralMedium }, 'Referral'],
  [{ any: [{ field: 'source', oneOf: VALUES.email }, { field: 'medium', oneOf: VALUES.email }] }, 'Email'],
  [{ field: 'medium', oneOf: ['affiliate'] }, 'Affiliates'],
  [
    {
      any: [
        { field: 'source', oneOf: VALUES.otherSource },
        { field: 'medium', oneOf: VALUES.otherMedium },
        { field: 'medium', endsWith: 'push' },
        { field: 'medium', contains: 'mobile' },
        { field: 'medium', contains: 'notification' },
      ],
    },
    'Other',
  ],
  [{ field: 'medium', oneOf: [''] }, 'Referral'],
];
const FALLBACK: Channel = 'Other';

function condSql(c: Cond, col: Record<Field, string>): string {
  if ('all' in c) return `(${c.all.map((x) => condSql(x, col)).join(' AND ')})`;
  if ('any' in c) return `(${c.any.map((x) => condSql(x, col)).join(' OR ')})`;
  const v = col[c.field];
  if ('oneOf' in c) return `${v} IN (${c.oneOf.map(sqlString).join(', ')})`;
  if ('contains' in c) return `position(${v}, ${sqlString(c.contains)}) > 0`;
  if ('startsWith' in c) return `startsWith(${v}, ${sqlString(c.startsWith)})`;
  if ('endsWith' in c) return `endsWith(${v}, ${sqlString(c.endsWith)})`;
  return `match(${v}, ${sqlString(c.regex)})`;
}

const compiled = new Map<string, RegExp>();
function holds(c: Cond, val: Record<Field, string>): boolean {
  if ('all' in c) return c.all.every((x) => holds(x, val));
  if ('any' in c) return c.any.some((x) => holds(x, val));
  const v = val[c.field];
  if ('oneOf' in c) return c.oneOf.includes(v);
  if ('contains' in c) return v.includes(c.contains);
  if ('startsWith' in c) return v.startsWith(c.startsWith);
  if ('endsWith' in c) return v.endsWith(c.endsWith);
  let re = compiled.get(c.regex);
  if (!re) compiled.set(c.regex, (re = new RegExp(c.regex)));
  return re.test(v);
}

/** ASCII-only lower case, as ClickHouse `lower()`: both sides must fold exactly the same characters. */
const lowerAscii = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/**
 * A ClickHouse expression giving the channel (one of CHANNELS) of the given SQL expressions for
 * the visit's source (referring host, lower-cased utm_source or `(direct)`) and its utm_source,
 * utm_medium and utm_campaign. The arguments are SQL, not values: pass column names or
 * expressions from code. All comparisons ignore ASCII case.
 */
export function channelSql(source: string, utmSource: string, utmMedium: string, utmCampaign: string): string {
  const col: Record<Field, string> = {
    source: `if(${utmSource} != '', lower(${utmSource}), lower(${source}))`,
    medium: `lower(${utmMedium})`,
    campaign: `lower(${utmCampaign})`,
  };
  const branches = RULES.map(([cond, channel]) => `${condSql(cond, col)}, ${sqlString(channel)}`);
  return `multiIf(${branches.join(', ')}, ${sqlString(FALLBACK)})`;
}

/** The channel of a visit with these values: the same rules as channelSql, in TypeScript. */
export function channelOf(source: string, utmSource: string, utmMedium: string, utmCampaign: string): Channel {
  const val: Record<Field, string> = {
    source: lowerAscii(utmSource !== '' ? utmSource : source),
    medium: lowerAscii(utmMedium),
    campaign: lowerAscii(utmCampaign),
  };
  return RULES.find(([cond]) => holds(cond, val))?.[1] ?? FALLBACK;
}
