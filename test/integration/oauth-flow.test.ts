import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { s256Challenge } from '../../src/oauth/pkce.js';
import { OAuthKeys } from '../../src/oauth/store.js';
import { sha256Hex } from '../../src/auth/tokens.js';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

const clock = fixedClock(Date.parse('2026-03-18T10:00:00Z'));
let h: Harness;
let other: Harness;
let server: { url: string; close(): Promise<void> };
let alice: TestUser;
let domain: string;
const REDIRECT = 'http://127.0.0.1:33418/callback';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

/** The `name=value` of a response's cookie called `name` (prefix match), for the next request. */
const cookieFrom = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0] ?? '';

/** A form POST carrying this browser's cookies. */
const formWithCookie = (fields: Record<string, string>, cookie: string) => ({ ...form(fields), headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie } });

/** Hidden inputs of a server-rendered form. */
function hiddenInputs(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[unescape(m[1])] = unescape(m[2]);
  return out;
}

async function register(redirectUris = [REDIRECT]): Promise<string> {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test Agent', redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  expect(res.status).toBe(201);
  const body = await res.json();
  expect(body).toMatchObject({ client_name: 'Test Agent', redirect_uris: redirectUris, token_endpoint_auth_method: 'none' });
  return body.client_id;
}

const verifierOf = () => `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;

/** Drives the browser part: authorize → login form → consent → approve; returns the redirect URL. */
async function authorize(clientId: string, verifier: string, opts: { scope?: string; resource?: string; state?: string; user?: TestUser } = {}): Promise<URL> {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: await s256Challenge(verifier),
    code_challenge_method: 'S256',
    scope: opts.scope ?? 'read',
    state: opts.state ?? 'st-123',
    resource: opts.resource ?? `${server.url}/mcp`,
  });
  const loginPage = await fetch(`${server.url}/oauth/authorize?${params}`, { redirect: 'manual' });
  if (loginPage.status === 302) return new URL(loginPage.headers.get('location')!);
  expect(loginPage.status).toBe(200);
  const loginHtml = await loginPage.text();
  expect(loginHtml).toContain('name="password"');
  const loginCookie = cookieFrom(loginPage, 'sl_login');
  expect(loginCookie).toMatch(/^sl_login=[\w-]{43}$/);
  const login = await fetch(`${server.url}/oauth/authorize`, formWithCookie({ ...hiddenInputs(loginHtml), email: (opts.user ?? alice).email, password: (opts.user ?? alice).password }, loginCookie));
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!;
  expect(cookie).toMatch(/sl_session=sls_/);
  expect(cookie).toMatch(/HttpOnly/i);
  const consentHtml = await login.text();
  expect(consentHtml).toContain('Test Agent');
  expect(consentHtml).toContain('Approve');
  const approve = await fetch(`${server.url}/oauth/authorize`, {
    ...form({ ...hiddenInputs(consentHtml), action: 'approve' }),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie.split(';')[0] },
  });
  expect(approve.status).toBe(302);
  return new URL(approve.headers.get('location')!);
}

async function token(fields: Record<string, string>) {
  const res = await fetch(`${server.url}/oauth/token`, form(fields));
  return { status: res.status, body: await res.json(), cacheControl: res.headers.get('cache-control') };
}

async function codeFlow(clientId: string, scope = 'read', user?: TestUser) {
  const verifier = verifierOf();
  const back = await authorize(clientId, verifier, { scope, user });
  const code = back.searchParams.get('code')!;
  const t = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
  expect(t.status).toBe(200);
  return { ...t.body, code, verifier } as { access_token: string; refresh_token: string; scope: string; expires_in: number; code: string; verifier: string };
}

function mcp(accessToken: string, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }, base = server.url) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${accessToken}`, 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  h = await createHarness({ clock });
  // A second deployment sharing the same Redis but with another public URL (another resource).
  other = await createHarness({ clock, env: { PUBLIC_URL: 'https://other.example' } });
  server = await listen(h.app);
  alice = await h.user('alice');
  domain = (await newProject(h, alice)).domain;
});

afterAll(async () => {
  await server?.close();
  await closeHarness();
});

describe('OAuth discovery and registration', () => {
  it('serves RFC 8414 metadata with the endpoints and S256 only', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(await res.json()).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['read', 'write'],
    });
    const other = await (await h.app.request('https://stats.example/.well-known/oauth-authorization-server')).json();
    expect(other.issuer).toBe('https://stats.example');
  });

  it('registers only https or loopback redirect URIs', async () => {
    await register(['https://agent.example/cb', 'http://localhost:9999/cb']);
    for (const bad of [['http://agent.example/cb'], ['javascript:alert(1)'], ['https://a.example/cb#frag'], []]) {
      const res = await fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: bad }) });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await res.json()).error).toBe('invalid_client_metadata');
    }
  });
});

describe('OAuth code flow with PKCE', () => {
  it('register → authorize → token → /mcp → refresh (rotated) → revoke', async () => {
    const clientId = await register();
    const verifier = verifierOf();
    const back = await authorize(clientId, verifier, { scope: 'read', state: 'xyz' });
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(back.searchParams.get('iss')).toBe(server.url);
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^slc_/);

    const t = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(t.status).toBe(200);
    expect(t.cacheControl).toBe('no-store');
    expect(t.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read' });
    expect(t.body.access_token).toMatch(/^slo_/);
    expect(t.body.refresh_token).toMatch(/^slr_/);
    // Stored hashed: the token text is nowhere in Redis, its digest is.
    expect(await h.deps.redis.get(OAuthKeys.access(await sha256Hex(t.body.access_token)))).toMatchObject({ scope: 'read', resource: `${server.url}/mcp` });

    // A real MCP client with the access token sees the read tools and Alice's project.
    const client = new Client({ name: 'oauth-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${t.body.access_token}` } } }));
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toContain('report_stats');
    expect(names).not.toContain('create_project');
    const detail = (await client.callTool({ name: 'get_project', arguments: { domain } })) as CallToolResult;
    expect(detail.isError).toBeFalsy();
    await client.close();
    // The token is for the MCP resource only: REST refuses it.
    expect((await h.call('GET', '/api/v1/projects', { token: t.body.access_token })).status).toBe(401);

    // Refresh rotates: the new pair works, the old refresh token does not.
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: clientId });
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(t.body.refresh_token);
    expect((await mcp(r1.body.access_token)).status).toBe(200);
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: clientId });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    // Revocation (RFC 7009): the access token is refused at once.
    const fresh = await codeFlow(clientId);
    expect((await mcp(fresh.access_token)).status).toBe(200);
    const revoked = await fetch(`${server.url}/oauth/revoke`, form({ token: fresh.access_token, client_id: clientId }));
    expect(revoked.status).toBe(200);
    const after = await mcp(fresh.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Revoking the refresh token ends the grant.
    await fetch(`${server.url}/oauth/revoke`, form({ token: fresh.refresh_token, client_id: clientId }));
    expect((await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token, client_id: clientId })).body.error).toBe('invalid_grant');
  });

  it('a write-scoped token can call write tools; a read token gets 403 insufficient_scope', async () => {
    const clientId = await register();
    const read = await codeFlow(clientId, 'read');
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_project', arguments: { name: 'Via OAuth', domain: h.domain('oauth') } } };
    const denied = await mcp(read.access_token, call);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    const write = await codeFlow(clientId, 'read write');
    expect(write.scope).toBe('read write');
    const ok = await mcp(write.access_token, call);
    expect(ok.status).toBe(200);
    const body = await ok.json();
    expect(body.result.isError).toBeFalsy();
    expect(JSON.parse(body.result.content[0].text)).toMatchObject({ name: 'Via OAuth', accessRole: 'owner' });
  });

  it('rejects a bad verifier, a reused code (revoking its tokens) and a wrong redirect URI', async () => {
    const clientId = await register([REDIRECT, 'http://127.0.0.1:33418/other']);
    const verifier = verifierOf();
    const bad = await authorize(clientId, verifier);
    const wrongVerifier = await token({ grant_type: 'authorization_code', code: bad.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifierOf() });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });

    const v2 = verifierOf();
    const wrongUri = await authorize(clientId, v2);
    const res = await token({ grant_type: 'authorization_code', code: wrongUri.searchParams.get('code')!, redirect_uri: 'http://127.0.0.1:33418/other', client_id: clientId, code_verifier: v2 });
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });

    const good = await codeFlow(clientId);
    expect((await mcp(good.access_token)).status).toBe(200);
    const reused = await token({ grant_type: 'authorization_code', code: good.code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: good.verifier });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    // Reuse means the code leaked: what it produced is revoked.
    expect((await mcp(good.access_token)).status).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: good.refresh_token, client_id: clientId })).body.error).toBe('invalid_grant');
  });

  it('refuses plain PKCE, a missing challenge and a foreign resource at authorize', async () => {
    const clientId = await register();
    const base = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 's', resource: `${server.url}/mcp` };
    const cases: [Record<string, string>, string][] = [
      [{ ...base, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      [{ ...base }, 'invalid_request'],
      [{ ...base, code_challenge: await s256Challenge(verifierOf()), code_challenge_method: 'S256', resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
      [{ ...base, code_challenge: await s256Challenge(verifierOf()), code_challenge_method: 'S256', scope: 'admin' }, 'invalid_scope'],
    ];
    for (const [params, error] of cases) {
      const res = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(to.searchParams.get('error')).toBe(error);
      expect(to.searchParams.get('state')).toBe('s');
    }
    // An unknown client or unregistered redirect URI is never redirected to.
    const unknown = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams({ ...base, client_id: 'cli_nope' })}`, { redirect: 'manual' });
    expect(unknown.status).toBe(400);
    const foreign = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: 'https://evil.example/cb' })}`, { redirect: 'manual' });
    expect(foreign.status).toBe(400);
  });

  it('refuses a forged consent form (CSRF) and a wrong password', async () => {
    const clientId = await register();
    const params = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: await s256Challenge(verifierOf()), code_challenge_method: 'S256', resource: `${server.url}/mcp` });
    const pageRes = await fetch(`${server.url}/oauth/authorize?${params}`);
    const page = await pageRes.text();
    const badLogin = await fetch(`${server.url}/oauth/authorize`, formWithCookie({ ...hiddenInputs(page), email: alice.email, password: 'wrong' }, cookieFrom(pageRes, 'sl_login')));
    expect(badLogin.status).toBe(401);
    expect(await badLogin.text()).toContain('Invalid email or password');
    const forged = await fetch(`${server.url}/oauth/authorize`, form({ ...Object.fromEntries(params), action: 'approve', csrf: 'csrf_forged' }));
    expect(forged.status).toBe(403);
  });

  it('binds the sign-in form to the browser: a token used with another browser\'s cookie, or none, is refused', async () => {
    const clientId = await register();
    const params = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: await s256Challenge(verifierOf()), code_challenge_method: 'S256', resource: `${server.url}/mcp` });
    const open = async () => {
      const res = await fetch(`${server.url}/oauth/authorize?${params}`);
      const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('sl_login='))!;
      return { fields: hiddenInputs(await res.text()), cookie: setCookie.split(';')[0], setCookie };
    };
    const victim = await open();
    const attacker = await open();
    expect(victim.cookie).not.toBe(attacker.cookie);
    expect(victim.setCookie).toMatch(/HttpOnly/i);
    expect(victim.setCookie).toMatch(/SameSite=Strict/i);
    expect(victim.setCookie).toMatch(/Path=\//);
    const signIn = (fields: Record<string, string>, cookie?: string) =>
      fetch(`${server.url}/oauth/authorize`, cookie ? formWithCookie({ ...fields, email: alice.email, password: alice.password }, cookie) : form({ ...fields, email: alice.email, password: alice.password }));

    // The attacker's token posted from the victim's browser (login CSRF), and a cookieless post.
    expect((await signIn(attacker.fields, victim.cookie)).status).toBe(403);
    expect((await signIn(victim.fields, undefined)).status).toBe(403);
    // The rightful browser keeps its cookie (none is set again) and its fresh form signs in.
    const again = await fetch(`${server.url}/oauth/authorize?${params}`, { headers: { Cookie: victim.cookie } });
    expect(again.headers.getSetCookie().some((c) => c.startsWith('sl_login='))).toBe(false);
    const ok = await signIn(hiddenInputs(await again.text()), victim.cookie);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Approve');
  });

  it('uses a __Host- cookie with Secure when served over https', async () => {
    const reg = await other.app.request('https://other.example/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) });
    const clientId = (await reg.json()).client_id as string;
    const params = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: await s256Challenge(verifierOf()), code_challenge_method: 'S256', resource: 'https://other.example/mcp' });
    const page = await other.app.request(`https://other.example/oauth/authorize?${params}`);
    const setCookie = page.headers.getSetCookie().find((c) => c.startsWith('__Host-sl_login='))!;
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Domain=/i);
  });

  it('refuses a token minted for another resource (audience) and an expired token', async () => {
    // Same Redis, another deployment: its tokens are for https://other.example/mcp.
    const reg = await other.app.request('https://other.example/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) });
    const otherClient = (await reg.json()).client_id as string;
    const verifier = verifierOf();
    const { code } = await mintCodeDirect(otherClient, verifier, 'https://other.example/mcp');
    const t = await (await other.app.request('https://other.example/oauth/token', form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: otherClient, code_verifier: verifier }))).json();
    expect(t.access_token).toMatch(/^slo_/);
    expect((await other.app.request('https://other.example/mcp', { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${t.access_token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })).status).toBe(200);
    const wrongAudience = await mcp(t.access_token);
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const clientId = await register();
    const live = await codeFlow(clientId);
    expect((await mcp(live.access_token)).status).toBe(200);
    clock.advance(3600_000 + 1000);
    try {
      const expired = await mcp(live.access_token);
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
      // The refresh token still works after the access token expired.
      const r = await token({ grant_type: 'refresh_token', refresh_token: live.refresh_token, client_id: clientId });
      expect((await mcp(r.body.access_token)).status).toBe(200);
    } finally {
      clock.advance(-(3600_000 + 1000));
    }
  });
});

describe('account deletion', () => {
  it('revokes every grant of the account: its tokens stop working and a pending code mints nothing', async () => {
    const bob = await h.user('oauth-leaver');
    const clientId = await register();
    const first = await codeFlow(clientId, 'read', bob);
    const second = await codeFlow(clientId, 'write', bob);
    // A code approved but not yet exchanged when the account goes.
    const verifier = verifierOf();
    const pending = (await authorize(clientId, verifier, { user: bob })).searchParams.get('code')!;
    expect((await mcp(first.access_token)).status).toBe(200);
    // Alice's grant on the same client must survive.
    const alices = await codeFlow(clientId);

    const del = await h.call('DELETE', '/api/account', { token: bob.session, body: { confirm: true, password: bob.password } });
    expect(del.status).toBe(200);

    for (const t of [first, second]) {
      expect(await h.deps.redis.exists(OAuthKeys.access(await sha256Hex(t.access_token)), OAuthKeys.refresh(await sha256Hex(t.refresh_token)))).toBe(0);
      expect((await mcp(t.access_token)).status).toBe(401);
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: clientId });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
    }
    const exchanged = await token({ grant_type: 'authorization_code', code: pending, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(exchanged.status).toBe(400);
    expect(exchanged.body).toMatchObject({ error: 'invalid_grant', error_description: 'The account no longer exists' });
    expect(await h.deps.redis.exists(OAuthKeys.accountGrants(bob.accountId))).toBe(0);
    expect((await mcp(alices.access_token)).status).toBe(200);
  });
});

/** The browser steps against the second deployment, through its in-process fetch. */
async function mintCodeDirect(clientId: string, verifier: string, resource: string): Promise<{ code: string }> {
  const base = 'https://other.example';
  const params = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: await s256Challenge(verifier), code_challenge_method: 'S256', resource });
  const pageRes = await other.app.request(`${base}/oauth/authorize?${params}`);
  const page = await pageRes.text();
  const login = await other.app.request(`${base}/oauth/authorize`, formWithCookie({ ...hiddenInputs(page), email: alice.email, password: alice.password }, cookieFrom(pageRes, '__Host-sl_login')));
  const cookie = cookieFrom(login, 'sl_session');
  const consent = await login.text();
  const approve = await other.app.request(`${base}/oauth/authorize`, { ...form({ ...hiddenInputs(consent), action: 'approve' }), headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie } });
  return { code: new URL(approve.headers.get('location')!).searchParams.get('code')! };
}
