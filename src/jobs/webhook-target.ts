import type { Config } from '../config.js';
import { badRequest } from '../errors.js';
import type { HostResolver } from '../net/host-resolver.js';
import { classifyAddress, isIpLiteral } from '../net/public-address.js';

/** How webhook targets are checked; build it with `webhookPolicy(deps)`. */
export interface WebhookTargetPolicy {
  /** `WEBHOOK_ALLOW_PRIVATE=1`: no check at all (local testing against 127.0.0.1). */
  allowPrivate: boolean;
  /**
   * Resolves host names (Node). Without it (Workers) only IP-literal hosts are checked: a
   * Worker's fetch goes out through Cloudflare and cannot reach private networks.
   */
  resolve?: HostResolver;
}

/**
 * The outcome of a check. `address` is the checked address to connect to (null: connect by
 * name, when nothing was resolved); connecting to it rather than resolving again is what keeps
 * DNS rebinding from swapping in a private address after the check.
 */
export type WebhookTarget = { ok: true; url: URL; address: string | null } | { ok: false; error: string };

export function webhookPolicy(deps: { config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE'>; webhookResolver?: HostResolver }): WebhookTargetPolicy {
  return { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE, resolve: deps.webhookResolver };
}

/** Longest a resolution may take before the host counts as unresolvable (getaddrinfo has no timeout of its own). */
const RESOLVE_TIMEOUT_MS = 5000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS resolution timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/**
 * Checks that a webhook URL leads to the public internet: its host must not be, or resolve to, a
 * loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT, multicast, unspecified
 * or reserved address, IPv4 or IPv6 (IPv4-mapped, NAT64 and 6to4/Teredo forms are judged by the
 * IPv4 address inside). Every resolved address must pass, not just one. Never throws.
 *
 * `field` names the value in the error text (`webhookUrl must …`). Call it when the URL is
 * accepted (a PUT: answer 400 with `error`) and again right before each delivery (the name may
 * resolve elsewhere by then), then connect to `address`.
 */
export async function checkWebhookTarget(url: string, policy: WebhookTargetPolicy, field = 'webhookUrl'): Promise<WebhookTarget> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, error: `${field} must be a URL` };
  }
  if (policy.allowPrivate) return { ok: true, url: parsed, address: null };
  // WHATWG URL parsing already turned 2130706433, 0x7f.1 and friends into a dotted quad.
  const host = bare(parsed.hostname).replace(/\.$/, '').toLowerCase();
  const refused = (cls: string) => ({ ok: false as const, error: `${field} must point to a public address: ${host} is ${cls === 'invalid' ? 'not a valid address' : `a ${cls} address`}` });
  if (isIpLiteral(host)) {
    const cls = classifyAddress(host);
    return cls === 'public' ? { ok: true, url: parsed, address: host } : refused(cls);
  }
  // RFC 6761: these names are the local machine whatever DNS says.
  if (host === 'localhost' || host.endsWith('.localhost')) return refused('loopback');
  if (!policy.resolve) return { ok: true, url: parsed, address: null };
  let addresses: string[];
  try {
    addresses = await withTimeout(policy.resolve(host), RESOLVE_TIMEOUT_MS);
  } catch {
    return { ok: false, error: `${field} host ${host} could not be resolved` };
  }
  if (addresses.length === 0) return { ok: false, error: `${field} host ${host} could not be resolved` };
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls !== 'public') return { ok: false, error: `${field} must point to a public address: ${host} resolves to a ${cls === 'invalid' ? 'reserved' : cls} address` };
  }
  return { ok: true, url: parsed, address: addresses[0]! };
}

/**
 * For routes that accept a webhook URL: resolves when `url` is an acceptable target, else throws
 * the 400 `{ error }` naming `field`. `null`/`undefined` (no webhook) always pass.
 */
export async function assertWebhookTarget(url: string | null | undefined, policy: WebhookTargetPolicy, field = 'webhookUrl'): Promise<void> {
  if (url === null || url === undefined) return;
  const target = await checkWebhookTarget(url, policy, field);
  if (!target.ok) throw badRequest(target.error);
}
