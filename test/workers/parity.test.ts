/// <reference types="@cloudflare/vitest-pool-workers/types" />
import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeUser, testEnv, unique, type WorkerUser } from './helpers.js';
import { normalize, PARITY_TABLE, type Credential } from './parity-table.js';

let user: WorkerUser;
let domain: string;
let site: string;

beforeAll(async () => {
  user = await makeUser('parity');
  domain = `${unique('parity')}.example.com`;
  const res = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Parity', domain } });
  expect(res.status).toBe(201);
  site = ((await res.json()) as { id: string }).id;
});

const tokenFor = (c: Credential) => ({ write: user.writeKey, read: user.readKey, none: undefined, bad: 'sl_not_a_key' })[c];

async function answer(res: Response) {
  return { status: res.status, type: res.headers.get('content-type'), dropped: res.headers.get('x-sightline-dropped'), body: normalize(await res.text()) };
}

describe('Node and Worker answer the parity table identically', () => {
  for (const row of PARITY_TABLE) {
    it(row.name, async () => {
      const path = row.path.replaceAll('{domain}', domain);
      const body = typeof row.body === 'object' ? JSON.parse(JSON.stringify(row.body).replaceAll('{site}', site)) : row.body;
      const opts = { token: tokenFor(row.token), body };
      const fromWorker = await answer(await call(row.method, path, opts));
      const fromNode = await answer(await call(row.method, path, opts, testEnv.NODE_APP_URL));
      expect(fromWorker).toEqual(fromNode);
      expect(fromWorker.status).not.toBe(500);
    });
  }
});
