import { lookup, type Resolver } from 'node:dns/promises';
import type { HostResolver } from './host-resolver.js';

/** Answers that mean "no address of this family", not a failure of the lookup. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * A HostResolver over Node's DNS. Without `resolver` it is the system's getaddrinfo (hosts file
 * included), which is what a plain HTTP client would connect to; with one (a `Resolver` set to
 * given servers) it asks those servers for A and AAAA records.
 */
export function nodeHostResolver(resolver?: Resolver): HostResolver {
  if (!resolver) {
    return async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
  }
  return async (hostname) => {
    const answers = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    const failure = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected' && !NO_ADDRESS.has((a.reason as NodeJS.ErrnoException).code ?? ''));
    // A real failure (timeout, refused) is not "no address": the caller must not treat it as an empty answer.
    if (failure && addresses.length === 0) throw failure.reason;
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    return addresses;
  };
}
