import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256Challenge } from '../../src/oauth/pkce.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const LIMIT = 3;
const octet = () => Math.floor(Math.random() * 254) + 1;
/** A fresh address per test: limiter windows in Redis outlive a run by a minute. */
const freshIp = () => `10.${octet()}.${octet()}.${octet()}`;

let h: Harness;
let user: TestUser;

beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_AUTH_PER_MIN: String(LIMIT), TRUST_PROXY: '1' } });
  user = await h.user('limited');
});
afterAll(closeHarness);

const login = (ip: string, password: string) =>
  h.call('POST', '/api/auth/login', { body: { email: user.email, password }, headers: { 'X-Forwarded-For': ip } });

const hiddenInputs = (html: string) =>
  Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&')]));

describe('sign-in and client registration are limited per client address', () => {
  it('POST /api/auth/login: wrong passwords up to the limit, then 429 with Retry-After; other addresses unaffected', async () => {
    const ip = freshIp();
    for (let i = 0; i < LIMIT; i++) expect((await login(ip, 'wrong password')).status).toBe(401);
    const limited = await login(ip, user.password);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await limited.json()).error).toBeTruthy();
    expect((await login(freshIp(), user.password)).status).toBe(200);
  });

  it('POST /oauth/register: limited the same way', async () => {
    const ip = freshIp();
    const register = () =>
      h.call('POST', '/oauth/register', { body: { client_name: 'Spam', redirect_uris: ['http://127.0.0.1:9/cb'] }, headers: { 'X-Forwarded-For': ip } });
    for (let i = 0; i < LIMIT; i++) expect((await register()).status).toBe(201);
    expect((await register()).status).toBe(429);
  });

  it('the OAuth sign-in page: the limit answers 429 with the page and a message, not a password check', async () => {
    const registered = await h.call('POST', '/oauth/register', { body: { client_name: 'Agent', redirect_uris: ['http://127.0.0.1:9/cb'] }, headers: { 'X-Forwarded-For': freshIp() } });
    const clientId = (await registered.json()).client_id as string;
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9/cb',
      code_challenge: await s256Challenge(`v-${crypto.randomUUID()}-${crypto.randomUUID()}`),
      code_challenge_method: 'S256',
      scope: 'read',
      state: 's',
      resource: 'http://localhost/mcp',
    });
    const ip = freshIp();
    const attempt = async (password: string) => {
      const page = await h.app.request(`/oauth/authorize?${params}`, { headers: { 'X-Forwarded-For': ip } });
      expect(page.status).toBe(200);
      const fields = { ...hiddenInputs(await page.text()), email: user.email, password };
      const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
      return h.app.request('/oauth/authorize', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': ip, Cookie: cookie },
        body: new URLSearchParams(fields).toString(),
      });
    };
    for (let i = 0; i < LIMIT; i++) expect((await attempt('wrong password')).status).toBe(401);
    const limited = await attempt(user.password);
    expect(limited.status).toBe(429);
    expect(await limited.text()).toContain('Too many sign-in attempts');
  });
});
