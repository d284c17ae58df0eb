import type { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { excludedIpsKey } from '../../src/ingest/state.js';
import { closeHarness, createHarness, listen, listenAsNode, type Harness, type Listening } from '../helpers/harness.js';

// TRUST_PROXY=2 (two proxies of ours in front): the client is the second X-Forwarded-For entry
// from the right; entries left of it are the client's own text. Which address the app took is
// seen through the project's excluded-IP list, on the Hono route and the Node fast path alike.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const CLIENT = '203.0.113.77';
const FORGED = '198.51.100.66';
let h: Harness;
let servers: [string, Listening][];
let site: string;
let domain: string;

beforeAll(async () => {
  h = await createHarness({ env: { TRUST_PROXY: '2', INGEST_IP_PER_MIN: '100000' } });
  const owner = await h.user('proxies');
  domain = h.domain('proxies');
  const created = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Proxies', domain } });
  site = (await created.json()).id;
  // The real client and the test's own socket address are excluded; the forged address is not.
  await (h.deps.redis as Redis).sadd(excludedIpsKey(site), CLIENT, '127.0.0.1');
  servers = [['hono', await listen(h.app)], ['node', await listenAsNode(h)]];
});
afterAll(async () => {
  for (const [, s] of servers ?? []) await s.close();
  await closeHarness();
});

async function dropped(base: string, forwardedFor: string): Promise<string | null> {
  const res = await fetch(`${base}/api/event`, {
    method: 'POST',
    headers: { 'user-agent': CHROME, 'x-forwarded-for': forwardedFor, 'content-type': 'text/plain' },
    body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/proxied` }),
  });
  expect(res.status).toBe(202);
  return res.headers.get('x-sightline-dropped');
}

describe('TRUST_PROXY=2 over real HTTP', () => {
  it('takes the second entry from the right, not the forgeable leftmost', async () => {
    for (const [name, server] of servers) {
      expect(await dropped(server.url, `${FORGED}, ${CLIENT}, 10.0.0.1`), name).toBe('excluded-ip');
      expect(await dropped(server.url, `${CLIENT}:50123, 10.0.0.1`), `${name} with a port`).toBe('excluded-ip');
      // A client at 198.51.100.66 wrote the excluded address on the left: not believed, its own address is.
      expect(await dropped(server.url, `${CLIENT}, ${FORGED}, 10.0.0.1`), name).toBeNull();
    }
  });

  it('falls back to the socket address when the chosen entry is not an IP address', async () => {
    for (const [name, server] of servers) {
      expect(await dropped(server.url, `${FORGED}, prj_x:members, 10.0.0.1`), name).toBe('excluded-ip');
      expect(await dropped(server.url, `${FORGED}, *, 10.0.0.1`), name).toBe('excluded-ip');
    }
  });

  it('stored the events of the believed addresses only', async () => {
    await h.deps.sink.flush();
    const rs = await h.deps.clickhouse.query({
      query: 'SELECT count() AS n FROM events WHERE project_id = {site:String} AND path = {path:String}',
      query_params: { site, path: '/proxied' },
      format: 'JSONEachRow',
    });
    // One per server: the request of the client at 198.51.100.66.
    expect(await rs.json()).toEqual([{ n: String(servers.length) }]);
  });
});
