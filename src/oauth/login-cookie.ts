import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../deps.js';
import { sha256Hex } from '../auth/tokens.js';
import { publicBase } from './base-url.js';

/**
 * Binds the consent page's sign-in form to the browser that loaded it. The form's one-time CSRF
 * token is stored for `login:<SHA-256 of a random cookie value>`, so a token lifted from another
 * browser (login CSRF: signing a victim into the attacker's account) is refused there. The cookie
 * is `__Host-` prefixed (Secure, Path=/, no Domain) when the service is served over https, plain
 * `sl_login` on http (browsers drop `__Host-` cookies without Secure); HttpOnly, SameSite=Strict.
 */
export const LOGIN_COOKIE_HTTPS = '__Host-sl_login';
export const LOGIN_COOKIE_HTTP = 'sl_login';
const LOGIN_COOKIE_TTL_SECONDS = 900;
const VALUE = /^[A-Za-z0-9_-]{43}$/;

const isHttps = (c: Context<AppEnv>) => publicBase(c).startsWith('https:');

/** The Redis binding of CSRF tokens issued to the browser holding `cookieValue`. */
export const loginCsrfBinding = async (cookieValue: string) => `login:${await sha256Hex(cookieValue)}`;

function randomValue(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The binding of this browser's sign-in forms. `issue`: set a fresh cookie when the browser has
 * none (showing the form); otherwise null without one (a posted form from a cookieless browser).
 */
export async function loginBinding(c: Context<AppEnv>, issue: boolean): Promise<string | null> {
  const https = isHttps(c);
  const name = https ? LOGIN_COOKIE_HTTPS : LOGIN_COOKIE_HTTP;
  let value = getCookie(c, name);
  if (!value || !VALUE.test(value)) {
    if (!issue) return null;
    value = randomValue();
    setCookie(c, name, value, { httpOnly: true, secure: https, sameSite: 'Strict', path: '/', maxAge: LOGIN_COOKIE_TTL_SECONDS });
  }
  return loginCsrfBinding(value);
}
