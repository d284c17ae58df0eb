import type { BotRangeKey } from './bot-ip-ranges.js';

/**
 * Bot categories.
 * - `ai_answer`: fetches made to answer a person through an AI assistant or AI search engine —
 *   user-triggered fetchers (ChatGPT-User, Claude-User, Perplexity-User…) and the crawlers that
 *   build those engines' search indexes (OAI-SearchBot, Claude-SearchBot, PerplexityBot). These
 *   can send visitors back, unlike training crawlers, which is why PerplexityBot sits here and
 *   not under `indexing`.
 * - `indexing`: classic search engines (Googlebot, Bingbot…).
 * - `training`: collection of model training data (GPTBot, ClaudeBot, CCBot…).
 * - `other`: link previews, SEO tools, monitors, HTTP libraries, headless browsers, unknown bots.
 */
export type BotCategory = 'ai_answer' | 'indexing' | 'training' | 'other';

/** One known crawler. */
export interface Crawler {
  slug: string;
  name: string;
  category: BotCategory;
  operator: string;
  /** Lower-case substrings of the user agent that identify it. */
  tokens: readonly string[];
  /** Published IP list that verifies it, when the operator has one. */
  ranges?: BotRangeKey;
}

type Row = [slug: string, name: string, operator: string, tokens: string | string[], ranges?: BotRangeKey];

const rows = (category: BotCategory, list: Row[]): Crawler[] =>
  list.map(([slug, name, operator, tokens, ranges]) => ({
    slug,
    name,
    category,
    operator,
    tokens: typeof tokens === 'string' ? [tokens] : tokens,
    ...(ranges ? { ranges } : {}),
  }));

/**
 * The crawler table. Specific tokens come before tokens they start with (Googlebot-Image
 * before Googlebot, Applebot-Extended before Applebot): see `findCrawler`. `Google-Extended` and `Applebot-Extended` are
 * robots.txt tokens that never appear in a UA; they are listed so the table names every agent
 * a site owner may see in robots.txt.
 */
export const CRAWLERS: readonly Crawler[] = [
  ...rows('ai_answer', [
    ['chatgpt-user', 'ChatGPT-User', 'OpenAI', 'chatgpt-user', 'chatgpt'],
    ['oai-searchbot', 'OAI-SearchBot', 'OpenAI', 'oai-searchbot', 'searchbot'],
    ['perplexity-user', 'Perplexity-User', 'Perplexity', 'perplexity-user', 'perplexity'],
    ['perplexitybot', 'PerplexityBot', 'Perplexity', 'perplexitybot', 'perplexity'],
    ['claude-user', 'Claude-User', 'Anthropic', 'claude-user'],
    ['claude-searchbot', 'Claude-SearchBot', 'Anthropic', 'claude-searchbot'],
    ['mistralai-user', 'MistralAI-User', 'Mistral AI', 'mistralai-user'],
    ['duckassistbot', 'DuckAssistBot', 'DuckDuckGo', 'duckassistbot'],
    ['meta-externalfetcher', 'Meta-ExternalFetcher', 'Meta', 'meta-externalfetcher'],
    ['google-cloudvertexbot', 'Google-CloudVertexBot', 'Google', 'google-cloudvertexbot'],
    ['gemini-deep-research', 'Gemini-Deep-Research', 'Google', 'gemini-deep-research'],
    ['youbot', 'YouBot', 'You.com', 'youbot'],
    ['phindbot', 'PhindBot', 'Phind', 'phindbot'],
  ]),
  ...rows('training', [
    ['gptbot', 'GPTBot', 'OpenAI', 'gptbot', 'gptbot'],
    ['claudebot', 'ClaudeBot', 'Anthropic', 'claudebot'],
    ['claude-web', 'Claude-Web', 'Anthropic', 'claude-web'],
    ['anthropic-ai', 'anthropic-ai', 'Anthropic', 'anthropic-ai'],
    ['google-extended', 'Google-Extended', 'Google', 'google-extended'],
    ['applebot-extended', 'Applebot-Extended', 'Apple', 'applebot-extended'],
    ['bytespider', 'Bytespider', 'ByteDance', 'bytespider'],
    ['meta-externalagent', 'Meta-ExternalAgent', 'Meta', 'meta-externalagent'],
    ['facebookbot', 'FacebookBot', 'Meta', 'facebookbot'],
    ['amazonbot', 'Amazonbot', 'Amazon', 'amazonbot'],
    ['cohere-ai', 'cohere-ai', 'Cohere', ['cohere-ai', 'cohere-training-data-crawler']],
    ['ai2bot', 'AI2Bot', 'Allen Institute for AI', 'ai2bot'],
    ['diffbot', 'Diffbot', 'Diffbot', 'diffbot'],
    ['timpibot', 'Timpibot', 'Timpi', 'timpibot'],
    ['imagesiftbot', 'ImagesiftBot', 'ImageSift', 'imagesiftbot'],
    ['omgili', 'Omgili', 'Webz.io', ['omgilibot', 'omgili/', 'webzio-extended']],
    ['pangubot', 'PanguBot', 'Huawei', 'pangubot'],
    ['ccbot', 'CCBot', 'Common Crawl', 'ccbot/'],
  ]),
  ...rows('indexing', [
    ['googlebot-image', 'Googlebot-Image', 'Google', 'googlebot-image', 'google'],
    ['googlebot-video', 'Googlebot-Video', 'Google', 'googlebot-video', 'google'],
    ['googlebot-news', 'Googlebot-News', 'Google', 'googlebot-news', 'google'],
    ['storebot-google', 'Storebot-Google', 'Google', 'storebot-google', 'google'],
    ['google-inspectiontool', 'Google-InspectionTool', 'Google', 'google-inspectiontool', 'google'],
    ['googlebot', 'Googlebot', 'Google', 'googlebot', 'google'],
    ['bingbot', 'Bingbot', 'Microsoft', 'bingbot', 'bing'],
    ['msnbot', 'MSNBot', 'Microsoft', 'msnbot', 'bing'],
    ['duckduckbot', 'DuckDuckBot', 'DuckDuckGo', 'duckduckbot'],
    ['yandexbot', 'YandexBot', 'Yandex', ['yandexbot', 'yandexmobilebot', 'yandeximages', 'yandexvideo', 'yandexnews']],
    ['baiduspider', 'Baiduspider', 'Baidu', 'baiduspider'],
    ['applebot', 'Applebot', 'Apple', 'applebot', 'apple'],
    ['slurp', 'Yahoo! Slurp', 'Yahoo', 'yahoo! slurp'],
    ['seznambot', 'SeznamBot', 'Seznam', 'seznambot'],
    ['petalbot', 'PetalBot', 'Huawei', 'petalbot'],
    ['sogou', 'Sogou Spider', 'Sogou', 'sogou web spider'],
    ['yeti', 'Yeti', 'Naver', 'yeti/'],
    ['coccocbot', 'coccocbot', 'Cốc Cốc', 'coccocbot'],
    ['mojeekbot', 'MojeekBot', 'Mojeek', 'mojeekbot'],
    ['qwantbot', 'Qwantbot', 'Qwant', ['qwantbot', 'qwantify']],
  ]),
  ...rows('other', [
    ['googleother', 'GoogleOther', 'Google', 'googleother', 'google'],
    ['adsbot-google', 'AdsBot-Google', 'Google', 'adsbot-google'],
    ['mediapartners-google', 'Mediapartners-Google', 'Google', 'mediapartners-google'],
    ['facebookexternalhit', 'facebookexternalhit', 'Meta', 'facebookexternalhit'],
    ['telegrambot', 'TelegramBot', 'Telegram', 'telegrambot'],
    ['twitterbot', 'Twitterbot', 'X', 'twitterbot'],
    ['linkedinbot', 'LinkedInBot', 'LinkedIn', 'linkedinbot'],
    ['slackbot', 'Slackbot', 'Slack', 'slackbot'],
    ['discordbot', 'Discordbot', 'Discord', 'discordbot'],
    ['whatsapp', 'WhatsApp', 'Meta', 'whatsapp/'],
    ['ahrefsbot', 'AhrefsBot', 'Ahrefs', 'ahrefsbot'],
    ['semrushbot', 'SemrushBot', 'Semrush', 'semrushbot'],
    ['mj12bot', 'MJ12bot', 'Majestic', 'mj12bot'],
    ['dotbot', 'DotBot', 'Moz', 'dotbot'],
    ['uptimerobot', 'UptimeRobot', 'UptimeRobot', 'uptimerobot'],
    ['pingdom', 'Pingdom', 'SolarWinds', 'pingdom.com_bot'],
    ['headless-chrome', 'Headless Chrome', 'Google', 'headlesschrome'],
    ['phantomjs', 'PhantomJS', 'PhantomJS', 'phantomjs'],
    ['curl', 'curl', 'curl', 'curl/'],
    ['wget', 'Wget', 'GNU', 'wget/'],
    ['python-requests', 'python-requests', 'Python', 'python-requests'],
    ['python-urllib', 'Python-urllib', 'Python', 'python-urllib'],
    ['go-http-client', 'Go-http-client', 'Go', 'go-http-client'],
    ['axios', 'axios', 'axios', 'axios/'],
    ['node-fetch', 'node-fetch', 'node-fetch', 'node-fetch'],
  ]),
];

const bySlug = new Map(CRAWLERS.map((c) => [c.slug, c]));
const byToken = new Map(CRAWLERS.flatMap((c) => c.tokens.map((t) => [t, c] as const)));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** All tokens in one alternation (table order): one scan of the UA instead of a pass per token. */
const TOKENS = new RegExp([...byToken.keys()].map(escape).join('|'), 'i');

/** The crawler with this slug, if the table knows it. */
export const crawlerBySlug = (slug: string): Crawler | undefined => bySlug.get(slug);

/**
 * The crawler named in the UA (case-insensitive): the leftmost token wins; tokens starting at
 * the same place are tried in table order, so the specific ones listed first win.
 */
export function findCrawler(ua: string): Crawler | undefined {
  const m = TOKENS.exec(ua);
  return m ? byToken.get(m[0].toLowerCase()) : undefined;
}
