import { Hono, type Context } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import type { AppEnv } from '../deps.js';
import { json } from '../http/openapi-helpers.js';
import { mcpResource } from './base-url.js';
import { OAuthError, oauthValidate } from './errors.js';
import { s256Challenge } from './pkce.js';
import { OAuthErrorBody, parseScope, RevokeForm, scopeText, TokenForm, TokenResponse } from './schemas.js';
import { consumeCode, consumeRefreshToken, getClient, issueTokens, revokeToken, type IssuedTokens } from './store.js';
import { timingSafeEqualHex } from '../auth/tokens.js';
import { getAccount } from '../auth/store.js';

const oauthError = (description: string) => json(description, OAuthErrorBody);
const invalidGrant = (why: string) => new OAuthError('invalid_grant', why);

async function requireClient(c: Context<AppEnv>, clientId: string) {
  const client = await getClient(c.get('services').deps.redis, clientId);
  if (!client) throw new OAuthError('invalid_client', 'Unknown client_id', 401);
  return client;
}

function tokenAnswer(c: Context<AppEnv>, t: IssuedTokens): Response {
  c.header('Cache-Control', 'no-store');
  c.header('Pragma', 'no-cache');
  return c.json({ access_token: t.accessToken, token_type: 'Bearer', expires_in: t.expiresIn, refresh_token: t.refreshToken, scope: scopeText(t.scope) });
}

/** Compares the S256 of the verifier with the stored challenge without an early exit. */
const verifierMatches = async (verifier: string, challenge: string) => timingSafeEqualHex(await s256Challenge(verifier), challenge);

/** `/oauth/token` and `/oauth/revoke`: code exchange, refresh rotation, revocation. */
export function tokenRoutes() {
  const app = new Hono<AppEnv>();

  app.post(
    '/token',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Exchange an authorization code (PKCE S256) or rotate a refresh token',
      description: 'Form-encoded. Access tokens last 1 hour and are bound to the MCP resource; each refresh token works once.',
      responses: { 200: json('Tokens', TokenResponse), 400: oauthError('invalid_request, invalid_grant, invalid_scope or invalid_target'), 401: oauthError('invalid_client') },
    }),
    oauthValidate('form', TokenForm),
    async (c) => {
      const form = c.req.valid('form') as v.InferOutput<typeof TokenForm>;
      const { redis, clock } = c.get('services').deps;
      const now = clock.now();
      const client = await requireClient(c, form.client_id);
      if (form.resource !== undefined && form.resource !== mcpResource(c)) {
        throw new OAuthError('invalid_target', `resource must be ${mcpResource(c)}`);
      }
      if (form.grant_type === 'authorization_code') {
        const taken = await consumeCode(redis, form.code, now);
        if (!taken.ok) throw invalidGrant(taken.reused ? 'The code was already used; tokens issued from it are revoked' : 'Unknown or expired code');
        const code = taken.record;
        if (code.clientId !== client.clientId) throw invalidGrant('The code was issued to another client');
        if (code.redirectUri !== form.redirect_uri) throw invalidGrant('redirect_uri does not match the authorization request');
        if (!(await verifierMatches(form.code_verifier, code.codeChallenge))) throw invalidGrant('code_verifier does not match the code_challenge');
        const { redirectUri: _r, codeChallenge: _ch, expiresAt: _e, ...grant } = code;
        // A code issued just before its account was deleted must not mint tokens after.
        if (!(await getAccount(redis, grant.accountId))) throw invalidGrant('The account no longer exists');
        return tokenAnswer(c, await issueTokens(redis, grant, now));
      }
      const taken = await consumeRefreshToken(redis, form.refresh_token, now);
      if (!taken.ok) throw invalidGrant('Unknown, expired or already used refresh token');
      const { expiresAt: _e, ...grant } = taken.record;
      if (grant.clientId !== client.clientId) throw invalidGrant('The refresh token was issued to another client');
      if (!(await getAccount(redis, grant.accountId))) throw invalidGrant('The account no longer exists');
      let scope = grant.scope;
      if (form.scope !== undefined) {
        const asked = parseScope(form.scope);
        if (!asked || (asked === 'write' && grant.scope !== 'write')) throw new OAuthError('invalid_scope', 'scope may only narrow the granted scope');
        scope = asked;
      }
      return tokenAnswer(c, await issueTokens(redis, { ...grant, scope }, now));
    },
  );

  app.post(
    '/revoke',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Revoke an access or refresh token (RFC 7009); a refresh token ends the whole grant',
      responses: { 200: json('Revoked (also for unknown tokens)', v.object({ ok: v.boolean() })), 400: oauthError('invalid_request'), 401: oauthError('invalid_client') },
    }),
    oauthValidate('form', RevokeForm),
    async (c) => {
      const form = c.req.valid('form') as v.InferOutput<typeof RevokeForm>;
      await requireClient(c, form.client_id);
      await revokeToken(c.get('services').deps.redis, form.token, form.client_id);
      c.header('Cache-Control', 'no-store');
      return c.json({ ok: true });
    },
  );
  return app;
}
