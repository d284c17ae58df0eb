/**
 * The dashboard's client of the JSON API. The session token from POST /api/auth/login lives in
 * sessionStorage: it survives reloads of the tab but not closing it, is never sent as a cookie
 * (so no CSRF surface), and is removed on sign-out and on any 401 (expired or revoked session).
 */

import { saveFile } from './dom.js';

const TOKEN_KEY = 'sightline.session';
let flash: string | null = null;

export const session = {
  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

/** A message for the next page (e.g. "session expired" on the sign-in page), read once. */
export function takeFlash(): string | null {
  const message = flash;
  flash = null;
  return message;
}

/** A failed API call: HTTP status and the `{error}` message of the body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A 401 on an authenticated call: the session is gone, so sign in again. */
function sessionExpired(): never {
  session.clear();
  flash = 'Your session has expired. Please sign in again.';
  location.hash = '#/signin';
  throw new ApiFailure(401, 'Session expired');
}

async function send(method: string, path: string, body: unknown, auth: boolean): Promise<Response> {
  const headers: Record<string, string> = {};
  const token = session.token;
  if (auth && token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, 'The server cannot be reached. Check your connection and try again.');
  }
  if (res.status === 401 && auth && token) sessionExpired();
  if (!res.ok) {
    let message = `Request failed (${res.status})`;
    try {
      const parsed = (await res.json()) as { error?: unknown };
      if (typeof parsed.error === 'string') message = parsed.error;
    } catch {
      // Not JSON: keep the generic message.
    }
    throw new ApiFailure(res.status, message);
  }
  return res;
}

/** Calls the API with the session token and returns the JSON answer. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await (await send(method, path, body, true)).json()) as T;
}

/** Calls a public route (share pages, sign-in) without a token. */
export async function publicApi<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await (await send(method, path, body, false)).json()) as T;
}

/** Fetches a file with the token and hands it to the browser as a download. */
export async function download(path: string, fallbackName: string): Promise<string> {
  const res = await send('GET', path, undefined, true);
  const disposition = res.headers.get('Content-Disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
  saveFile(name, await res.blob());
  return name;
}

/** `/api/v1/projects/{domain}` plus `rest`. */
export const projectPath = (domain: string, rest = '') => `/api/v1/projects/${encodeURIComponent(domain)}${rest}`;

/** A query string from defined values. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
