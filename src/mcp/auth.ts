import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../deps.js';
import { ApiError, Messages } from '../errors.js';
import { bearerToken, resolveCredential } from '../auth/middleware.js';
import { mcpResource, publicBase, resourceMetadataUrl } from '../oauth/base-url.js';

/** RFC 6750 §3 challenge pointing clients at the protected-resource metadata (RFC 9728 §5.1). */
export function challenge(c: Context<AppEnv>, error?: { code: string; description: string; scope?: string }): string {
  const parts = [`resource_metadata="${resourceMetadataUrl(c)}"`];
  if (error) {
    parts.push(`error="${error.code}"`, `error_description="${error.description}"`);
    if (error.scope) parts.push(`scope="${error.scope}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/** Browsers send Origin; a foreign one is a DNS-rebinding or cross-site attempt (MCP transport spec). */
function originAllowed(c: Context<AppEnv>): boolean {
  const origin = c.req.header('Origin');
  if (!origin) return true;
  try {
    return new URL(origin).origin === new URL(publicBase(c)).origin;
  } catch {
    return false;
  }
}

/**
 * Authentication of /mcp: an API key, or an OAuth access token issued for exactly this
 * resource. Missing → 401 with the challenge; invalid, expired or for another audience → 401
 * with `error="invalid_token"`. A foreign Origin → 403.
 */
export const mcpAuth = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (!originAllowed(c)) throw new ApiError(403, 'Origin not allowed');
    const token = bearerToken(c.req.header('Authorization'));
    if (!token) throw new ApiError(401, Messages.unauthorized, { 'WWW-Authenticate': challenge(c) });
    const ctx = await resolveCredential(c.get('services'), token);
    const usable = ctx && (ctx.via === 'key' || (ctx.via === 'oauth' && ctx.audience === mcpResource(c)));
    if (!ctx || !usable) {
      throw new ApiError(401, Messages.unauthorized, {
        'WWW-Authenticate': challenge(c, { code: 'invalid_token', description: 'The access token is invalid, expired, revoked or for another resource' }),
      });
    }
    c.set('auth', ctx);
    await next();
  });
