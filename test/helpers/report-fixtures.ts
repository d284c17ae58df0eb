import { expect } from 'vitest';
import { getProject, setMember } from '../../src/projects/store.js';
import type { Harness, TestUser } from './harness.js';

/** A fresh project owned by `owner`; returns its domain and id. */
export async function newProject(h: Harness, owner: TestUser, timeZone = 'UTC'): Promise<{ domain: string; id: string }> {
  const domain = h.domain('rep');
  const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Reports', domain, timeZone } });
  expect(res.status).toBe(201);
  return { domain, id: ((await res.json()) as { id: string }).id };
}

/** Gives `user` a non-owner role in the project. */
export async function addMember(h: Harness, projectId: string, user: TestUser, role: 'admin' | 'member'): Promise<void> {
  const project = await getProject(h.deps.redis, projectId);
  if (!project) throw new Error(`no project ${projectId}`);
  await setMember(h.deps.redis, project, user.accountId, role, h.deps.clock.now());
}

/** Calls the API and returns the status with the parsed JSON body. */
export async function callJson(h: Harness, method: string, path: string, token?: string, body?: unknown) {
  const res = await h.call(method, path, { token, body });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

/** A small deterministic generator (mulberry32): the same seed gives the same data set. */
export function seededRandom(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

/** ClickHouse DateTime64 text of an instant (UTC). */
export const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Asks for a report as CSV; returns the header and data lines (comment lines dropped). */
export async function csvLines(h: Harness, path: string, token: string): Promise<string[]> {
  const res = await h.call('GET', path, { token, headers: { Accept: 'text/csv' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
  return (await res.text()).split(/\r?\n/).filter((l) => l !== '' && !l.startsWith('#'));
}
