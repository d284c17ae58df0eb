import type { Context } from 'hono';
import type { AppEnv } from '../deps.js';

/**
 * `{base}` of every public URL (MCP resource metadata, OAuth issuer, share links, install
 * snippet; README "Agent endpoint (MCP) and OAuth"): PUBLIC_URL when configured (behind a
 * proxy the request's own origin is not what clients see), else the origin of the request. No
 * trailing slash.
 */
export function publicBase(c: Context<AppEnv>): string {
  const configured = c.get('services').deps.config.PUBLIC_URL;
  return configured ? configured.replace(/\/+$/, '') : new URL(c.req.url).origin;
}

/** The MCP endpoint as an OAuth protected resource: the only audience tokens are minted for. */
export const mcpResource = (c: Context<AppEnv>) => `${publicBase(c)}/mcp`;

/** Where the protected-resource metadata of the MCP endpoint is served (RFC 9728 §3.1). */
export const resourceMetadataUrl = (c: Context<AppEnv>) => `${publicBase(c)}/.well-known/oauth-protected-resource/mcp`;
