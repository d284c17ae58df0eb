import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { connectRespRedis } from '../../src/adapters/redis-resp.js';
import { createAccount } from '../../src/auth/store.js';
import { createProject } from '../../src/projects/store.js';
import { TEST_REDIS_URL, unique } from '../helpers/harness.js';
import { freePort, startNodeServer, type NodeServer } from '../helpers/node-server.js';

/**
 * `kill -9` of a running `npm start` in the middle of sustained ingest: several clients send
 * events, each with a path of its own, the server is killed while they do, restarted on the same
 * DATA_DIR, and after a clean stop the rows are counted path by path. Every event answered 202
 * is stored exactly once; an event whose request was cut off by the kill may or may not be, but
 * never twice. This file needs no harness: the project is made in Redis directly, and this
 * process opens the server's ClickHouse data only once the server is gone (one embedded engine
 * per process and data directory).
 */
const CLIENTS = 8;
/** Events acknowledged before the kill: several flushes' worth at INGEST_FLUSH_MS below. */
const ACKED_BEFORE_KILL = 1000;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Tally {
  /** Paths answered 202 without a drop reason. */
  acked: string[];
  /** Paths whose request failed without an answer (the kill cut it off, or it never left). */
  inDoubt: string[];
  /** Any other answer, by status (none expected). */
  other: string[];
}

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

/**
 * One client: sends events one after another until `until()` says stop or a request fails
 * (the server is gone: the client leaves the phase rather than pile up refused requests).
 */
async function client(base: string, site: string, domain: string, label: string, tally: Tally, until: () => boolean): Promise<void> {
  for (let seq = 0; !until(); seq++) {
    const path = `/${label}-${seq}`;
    try {
      const res = await fetch(`${base}/api/event`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': UA, 'X-Forwarded-For': `10.77.${label.length}.${seq % 250}` },
        body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}${path}` }),
      });
      await res.arrayBuffer();
      if (res.status === 202 && res.headers.get('x-sightline-dropped') === null) tally.acked.push(path);
      else tally.other.push(`${res.status} ${res.headers.get('x-sightline-dropped') ?? ''} ${path}`);
    } catch {
      tally.inDoubt.push(path);
      return;
    }
  }
}

describe('kill -9 of npm start during sustained ingest', () => {
  it('stores every acknowledged event exactly once, and no cut-off event twice', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-fault-kill9-'));
    dirs.push(dataDir);
    const { redis, close } = await connectRespRedis({ url: TEST_REDIS_URL });
    const now = Date.now();
    const account = await createAccount(redis, { email: `${unique('kill9')}@test.example`, password: 'kill nine kill nine' }, now);
    const domain = `${unique('kill9')}.example.com`;
    const created = await createProject(redis, { name: 'Kill 9', domain, timeZone: 'UTC', ownerId: account.id }, now);
    await close();
    if (!created.ok) throw new Error('could not create the project');
    const site = created.project.id;

    const env = {
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      REDIS_URL: TEST_REDIS_URL,
      TRUST_PROXY: '1',
      INGEST_IP_PER_MIN: '1000000',
      INGEST_PROJECT_PER_SEC: '1000000',
      // Short batches: at the kill some are in ClickHouse, some being inserted, some still open.
      INGEST_FLUSH_MS: '150',
    };
    const tally: Tally = { acked: [], inDoubt: [], other: [] };
    let server: NodeServer = await startNodeServer(env);
    let exitCode: number | null = null;
    try {
      // Phase 1: the clients send until the kill ends their requests.
      let running = CLIENTS;
      const phase1 = Array.from({ length: CLIENTS }, (_, c) => client(server.url, site, domain, `a${c}`, tally, () => false).finally(() => running--));
      while (tally.acked.length < ACKED_BEFORE_KILL && running === CLIENTS) await new Promise((r) => setTimeout(r, 20));
      await server.stop('SIGKILL');
      await Promise.all(phase1);
      expect(tally.acked.length).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);
      // Every client was still sending when the process died: one request each was cut off.
      expect(tally.inDoubt.length).toBe(CLIENTS);
      // The killed process left acknowledged rows that only its journal holds.
      const journal = join(dataDir, 'ingest-journal');
      expect(readdirSync(journal).some((name) => statSync(join(journal, name)).size > 0)).toBe(true);

      // Phase 2: the restarted server (same DATA_DIR) replays its journal while new events arrive.
      server = await startNodeServer(env);
      const deadline = Date.now() + 2000;
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(server.url, site, domain, `b${c}`, tally, () => Date.now() > deadline)));
      expect(tally.inDoubt.length).toBe(CLIENTS);
    } finally {
      // A clean stop flushes what the second process holds.
      exitCode = await server.stop('SIGTERM');
    }
    // The server's own output says why when it did not exit cleanly (a signal, a crash on close).
    expect({ exitCode, signal: server.child.signalCode }, server.output().slice(-3000)).toEqual({ exitCode: 0, signal: null });
    expect(tally.other).toEqual([]);
    // A stop gives up on ClickHouse after a few seconds and leaves what it could not send in the
    // journal for the next start (README "Shutdown"): on a busy host, start it again until it is empty.
    const journal = join(dataDir, 'ingest-journal');
    const journaled = () => readdirSync(journal).some((name) => statSync(join(journal, name)).size > 0);
    for (let start = 0; start < 3 && journaled(); start++) {
      const again = await startNodeServer(env);
      expect(await again.stop('SIGTERM')).toBe(0);
    }
    expect(journaled()).toBe(false);

    const { client: ch } = await connectNodeClickHouse({ dataDir });
    let stored: Map<string, number>;
    try {
      const rs = await ch.query({
        query: 'SELECT path, count() AS n FROM events WHERE project_id = {id:String} GROUP BY path',
        query_params: { id: site },
        format: 'JSONEachRow',
      });
      stored = new Map((await rs.json<{ path: string; n: string }>()).map((r) => [r.path, Number(r.n)]));
    } finally {
      await ch.close();
    }
    const lost = tally.acked.filter((p) => !stored.has(p));
    const doubled = [...stored].filter(([, n]) => n !== 1).map(([p, n]) => `${p} ×${n}`);
    const sent = new Set([...tally.acked, ...tally.inDoubt]);
    const unknown = [...stored.keys()].filter((p) => !sent.has(p));
    const inDoubtStored = tally.inDoubt.filter((p) => stored.has(p)).length;
    expect({ lost, doubled, unknown }).toEqual({ lost: [], doubled: [], unknown: [] });
    expect(stored.size).toBe(tally.acked.length + inDoubtStored);
    console.log(`kill -9: ${tally.acked.length} acknowledged, all stored once; ${tally.inDoubt.length} cut off in flight, ${inDoubtStored} of them stored`);
  }, 180_000);
});
