import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { describeRoute, validator as openapiValidator } from 'hono-openapi';
import * as v from 'valibot';
import type { AppEnv } from '../deps.js';
import { signIn } from '../auth/sign-in.js';
import { byClientIp } from '../ratelimit.js';
import { createSession, findSession, getAccount, type Account } from '../auth/store.js';
import { parseToken, sha256Hex } from '../auth/tokens.js';
import { mcpResource, publicBase } from './base-url.js';
import { consentPage, errorPage, loginPage } from './consent-page.js';
import { isS256Challenge } from './pkce.js';
import { AuthorizeForm, AuthorizeParams, parseScope, type AuthorizeParamsT } from './schemas.js';
import { consumeCsrf, createCode, createCsrf, getClient, type OAuthClient } from './store.js';
import { SESSION_TTL_SECONDS } from '../auth/store.js';
import { loginBinding } from './login-cookie.js';

/** The browser session of the consent flow: an HttpOnly cookie holding a session token. */
const SESSION_COOKIE = 'sl_session';

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

function pageResponse(c: Context<AppEnv>, body: string, status: 200 | 400 | 401 | 403 | 429 = 200): Response {
  c.header('Cache-Control', 'no-store');
  // The consent page must never be framed (clickjacking).
  c.header('X-Frame-Options', 'DENY');
  c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  return c.html(body, status);
}

/** Sends the browser back to the client with `params`, the request's state and our issuer (RFC 9207). */
function redirectBack(c: Context<AppEnv>, request: AuthorizeParamsT, params: Record<string, string>): Response {
  const url = new URL(request.redirect_uri);
  for (const [k, val] of Object.entries(params)) url.searchParams.set(k, val);
  if (request.state !== undefined) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', publicBase(c));
  c.header('Cache-Control', 'no-store');
  return c.redirect(url.toString(), 302);
}

type Checked = { ok: true; client: OAuthClient; scope: 'read' | 'write' } | { ok: false; response: Response };

/**
 * Checks an authorization request. Until client and redirect URI are known good, errors are
 * shown here (never redirected: RFC 6749 §4.1.2.1); after that they go back to the client.
 */
async function checkRequest(c: Context<AppEnv>, p: AuthorizeParamsT): Promise<Checked> {
  const client = await getClient(c.get('services').deps.redis, p.client_id);
  if (!client) return { ok: false, response: pageResponse(c, errorPage('Unknown client_id: register the client first.'), 400) };
  if (!client.redirectUris.includes(p.redirect_uri)) {
    return { ok: false, response: pageResponse(c, errorPage('redirect_uri is not registered for this client.'), 400) };
  }
  const fail = (error: string, error_description: string): Checked => ({ ok: false, response: redirectBack(c, p, { error, error_description }) });
  if (p.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  if (!p.code_challenge) return fail('invalid_request', 'code_challenge is required (PKCE)');
  if (p.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
  if (!isS256Challenge(p.code_challenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters (S256)');
  const scope = parseScope(p.scope || 'read');
  if (!scope) return fail('invalid_scope', 'scope must be read, write or "read write"');
  if (p.resource !== mcpResource(c)) return fail('invalid_target', `resource must be ${mcpResource(c)}`);
  return { ok: true, client, scope };
}

/** The signed-in account of this browser, from the session cookie. */
async function browserSession(c: Context<AppEnv>): Promise<{ account: Account; binding: string } | null> {
  const token = getCookie(c, SESSION_COOKIE);
  if (!token || parseToken(token) !== 'session') return null;
  const { redis, clock } = c.get('services').deps;
  const hash = await sha256Hex(token);
  const session = await findSession(redis, hash, clock.now());
  const account = session ? await getAccount(redis, session.accountId) : null;
  return account ? { account, binding: `session:${hash}` } : null;
}

const requestOf = (form: v.InferOutput<typeof AuthorizeForm>): AuthorizeParamsT =>
  Object.fromEntries(Object.keys(AuthorizeParams.entries).map((k) => [k, form[k as keyof AuthorizeParamsT]]).filter(([, val]) => val !== undefined)) as AuthorizeParamsT;

async function showConsent(c: Context<AppEnv>, p: AuthorizeParamsT, checked: Extract<Checked, { ok: true }>, account: Account, binding: string) {
  const csrf = await createCsrf(c.get('services').deps.redis, binding);
  return pageResponse(c, consentPage(p, csrf, { clientName: checked.client.clientName, email: account.email, scope: checked.scope, redirectUri: p.redirect_uri }));
}

async function showLogin(c: Context<AppEnv>, p: AuthorizeParamsT, client: OAuthClient, error?: string, status: 401 | 429 = 401) {
  // The form's token only works from this browser (src/oauth/login-cookie.ts).
  const binding = (await loginBinding(c, true))!;
  const csrf = await createCsrf(c.get('services').deps.redis, binding);
  return pageResponse(c, loginPage(p, csrf, client.clientName, error), error ? status : 200);
}

const pageOnInvalid = (result: { success: boolean; error?: readonly { message: string }[] }, c: Context<AppEnv>) =>
  result.success ? undefined : pageResponse(c, errorPage(result.error?.[0]?.message ?? 'Invalid request'), 400);

/** `/oauth/authorize`: the server-rendered sign-in and consent steps of the code flow. */
export function authorizeRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    '/authorize',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Authorization endpoint: sign-in form, or consent page for the signed-in browser',
      responses: {
        200: html('Sign-in or consent page'),
        302: { description: 'Back to the client with an error (invalid PKCE, scope, resource or response_type)' },
        400: html('Unknown client or unregistered redirect URI'),
      },
    }),
    openapiValidator('query', AuthorizeParams as never, pageOnInvalid as never),
    async (c) => {
      const p = c.req.valid('query' as never) as AuthorizeParamsT;
      const checked = await checkRequest(c, p);
      if (!checked.ok) return checked.response;
      const session = await browserSession(c);
      if (!session) return showLogin(c, p, checked.client);
      return showConsent(c, p, checked, session.account, session.binding);
    },
  );

  app.post(
    '/authorize',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Sign in (action=login) or answer the consent (action=approve|deny); approve redirects with the code',
      responses: {
        200: html('Consent page after sign-in'),
        302: { description: 'Back to the client with `code` and `state`, or with `error`' },
        400: html('Invalid request'),
        401: html('Sign-in failed'),
        403: html('Expired or forged form (CSRF)'),
        429: html('Too many sign-in attempts from this address'),
      },
    }),
    openapiValidator('form', AuthorizeForm as never, pageOnInvalid as never),
    async (c) => {
      const form = c.req.valid('form' as never) as v.InferOutput<typeof AuthorizeForm>;
      const p = requestOf(form);
      const checked = await checkRequest(c, p);
      if (!checked.ok) return checked.response;
      const { redis, clock } = c.get('services').deps;
      const expired = () => pageResponse(c, errorPage('This form has expired; start the connection again from your app.'), 403);

      if (form.action === 'login') {
        const binding = await loginBinding(c, false);
        if (!binding || !(await consumeCsrf(redis, form.csrf, binding))) return expired();
        // The same per-address limit as POST /api/auth/login: passwords are not guessed here either.
        const allowed = await c.get('services').limiters.check('auth', byClientIp(c));
        if (!allowed.success) return showLogin(c, p, checked.client, 'Too many sign-in attempts. Wait a minute and try again.', 429);
        const account = await signIn(c.get('services').deps, form.email ?? '', form.password ?? '');
        if (!account) return showLogin(c, p, checked.client, 'Invalid email or password');
        const { token } = await createSession(redis, account.id, clock.now());
        setCookie(c, SESSION_COOKIE, token, {
          httpOnly: true,
          sameSite: 'Lax',
          secure: publicBase(c).startsWith('https:'),
          path: '/oauth',
          maxAge: SESSION_TTL_SECONDS,
        });
        return showConsent(c, p, checked, account, `session:${await sha256Hex(token)}`);
      }

      const session = await browserSession(c);
      if (!session || !(await consumeCsrf(redis, form.csrf, session.binding))) return expired();
      if (form.action === 'deny') return redirectBack(c, p, { error: 'access_denied', error_description: 'The user denied access' });
      const code = await createCode(
        redis,
        {
          accountId: session.account.id,
          clientId: checked.client.clientId,
          redirectUri: p.redirect_uri,
          codeChallenge: p.code_challenge,
          scope: checked.scope,
          resource: p.resource,
        },
        clock.now(),
      );
      return redirectBack(c, p, { code });
    },
  );
  return app;
}
