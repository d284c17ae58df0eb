/**
 * Every address (IPv4 and IPv6) a host name resolves to. Rejects when the name cannot be
 * resolved at all. A port so the app never imports a runtime's resolver: the Node entry point
 * hands in node:dns (src/net/node-host-resolver.ts); Workers have none.
 */
export type HostResolver = (hostname: string) => Promise<string[]>;
