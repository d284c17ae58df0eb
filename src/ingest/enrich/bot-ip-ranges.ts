/**
 * IP ranges that crawler operators publish for verifying their bots.
 *
 * SNAPSHOTS — refresh from the sources below; operators add ranges over time, so a stale list
 * under-verifies (never over-verifies beyond the operator's own address space). A representative
 * subset, summarised where the operator's published blocks nest inside one larger block it owns.
 *
 * - google:     https://developers.google.com/static/search/apis/ipranges/googlebot.json
 *               (its /27 and /64 blocks sit inside 66.249.64.0/19 and 2001:4860:4801::/48)
 * - bing:       https://www.bing.com/toolbox/bingbot.json
 * - gptbot:     https://openai.com/gptbot.json
 * - chatgpt:    https://openai.com/chatgpt-user.json
 * - searchbot:  https://openai.com/searchbot.json
 * - perplexity: https://www.perplexity.com/perplexitybot.json
 * - apple:      Apple owns all of 17.0.0.0/8 (https://support.apple.com/en-us/119829)
 *
 * Operators that only document reverse-DNS verification (Yandex, Baidu, Anthropic…) have no
 * entry: their bots stay unverified unless the edge (Cloudflare) verified them.
 */
export const BOT_IP_RANGES = {
  google: ['66.249.64.0/19', '2001:4860:4801::/48'],
  bing: ['157.55.39.0/24', '207.46.13.0/24', '40.77.167.0/24', '13.66.139.0/24', '13.66.144.0/24', '52.167.144.0/24'],
  gptbot: ['52.230.152.0/24', '20.171.206.0/24', '20.171.207.0/24'],
  chatgpt: ['23.98.142.176/28', '40.84.180.224/28', '13.65.240.240/28'],
  searchbot: ['20.42.10.176/28', '172.203.190.128/28', '51.8.102.0/24'],
  perplexity: ['107.20.236.150/32', '3.224.62.45/32'],
  apple: ['17.0.0.0/8'],
} as const satisfies Record<string, readonly string[]>;

/** Which published list verifies a crawler. */
export type BotRangeKey = keyof typeof BOT_IP_RANGES;
