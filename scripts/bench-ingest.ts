/**
 * Ingestion benchmark (`npm run bench:ingest`).
 *
 * Starts the real Node entry (batcher sink, embedded ClickHouse in a temp DATA_DIR, Redis db 9)
 * as a child process on a loopback port, then:
 *  1. autocannon POSTs realistic tracker events to /api/event over 64 connections, each from one
 *     of 8192 X-Forwarded-For addresses (TRUST_PROXY=1): first as fast as possible (the ceiling),
 *     then at a fixed 5 000 events/s for 30 s (latency at the target load, offered by staggered
 *     groups), then the same rate from one autocannon instance (its burst shape, for comparison);
 *  2. streams a generated 1 000 000-line NDJSON file to the import endpoint.
 * The server is then stopped (SIGTERM flushes its buffer) and the bench opens the same data
 * directory to count rows: events stored must equal 2xx answers (zero loss) and imported lines.
 *
 * Options: --ceiling 10 (s of the as-fast-as-possible run) --settle 10 (s of rest before each rated run) --duration 30 --rate 5000 (offered
 * events/s of the sustained run) --groups 8 (staggered autocannon instances sharing it) --burst 30 (s of the same rate from one instance; 0 skips)
 * --connections 64 --lines 1000000 --only event|import (one phase)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import autocannon from 'autocannon';
import { hostCalibrationLine } from './bench-host.js';
import { connectNodeClickHouse } from '../src/adapters/node-clickhouse.js';
import { connectRespRedis } from '../src/adapters/redis-resp.js';
import { createAccount, createApiKey } from '../src/auth/store.js';
import { createProject } from '../src/projects/store.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DURATION = arg('duration', 30);
const CONNECTIONS = arg('connections', 64);
const LINES = arg('lines', 1_000_000);
const RATE = arg('rate', 5000);
const CEILING_SECONDS = arg('ceiling', 10);
const SETTLE_SECONDS = arg('settle', 10);
const GROUPS = arg('groups', 8);
const BURST_SECONDS = arg('burst', 30);
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : '';
const PORT = arg('port', 18000 + Math.floor(Math.random() * 1000));
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/9';
const BASE = `http://127.0.0.1:${PORT}`;

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
];
const REFERRERS = [undefined, undefined, 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://t.co/abc', 'https://duckduckgo.com/'];

const peakRssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
};

/** CPU seconds (user + system) the process has used: per-event cost that other load on the cores does not skew. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/** CPU seconds per thread name (`/proc/{pid}/task/*`): the JS main thread vs the engine's pools. */
const cpuByThread = (pid: number): Map<string, number> => {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, '');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
};

/** The busiest threads' share of `used` CPU since `before`, e.g. "node 61%, QueryPipelineEx 20%". */
const threadShares = (before: Map<string, number>, after: Map<string, number>): string => {
  const deltas = [...after].map(([name, s]) => [name, s - (before.get(name) ?? 0)] as const).filter(([, d]) => d > 0);
  const total = deltas.reduce((a, [, d]) => a + d, 0) || 1;
  return deltas.sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, d]) => `${name} ${((d / total) * 100).toFixed(0)}%`).join(', ');
};

async function startServer(dataDir: string): Promise<ChildProcess> {
  // BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server alone.
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/entry/node.ts'], {
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      REDIS_URL,
      TRUST_PROXY: '1',
      INGEST_PROJECT_PER_SEC: '1000000',
      INGEST_IP_PER_MIN: '1000000',
      RATE_LIMIT_API_PER_MIN: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d) => process.stderr.write(`  [server] ${d}`));
  const ready = new Promise<void>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('listening on')) ok();
    });
    child.once('exit', (code) => fail(new Error(`server exited with ${code}`)));
  });
  await ready;
  return child;
}

function eventBody(i: number, site: string, domain: string) {
  const page = Math.floor(Math.abs(Math.sin(i) * 10_000)) % 200;
  const kind = i % 10 === 9 ? 'leave' : i % 25 === 0 ? 'custom' : 'pageview';
  return JSON.stringify({
    site,
    kind,
    url: `https://${domain}/blog/post-${page}?utm_source=${i % 7 === 0 ? 'newsletter' : ''}`,
    referrer: REFERRERS[i % REFERRERS.length],
    screenWidth: [390, 1440, 1920, 820][i % 4],
    ...(kind === 'leave' ? { durationMs: 1000 + (i % 60_000) } : {}),
    ...(kind === 'custom' ? { name: 'Signup', props: { plan: i % 2 ? 'pro' : 'free' } } : {}),
  });
}

/** What a load run saw, summed over its autocannon instances. */
interface LoadRun {
  sent: number;
  answered: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  byStatus: Record<string, number>;
  /** Accepted events per second: each instance's 2xx over its own duration, summed. */
  eventsPerSec: number;
  times: ResponseTimes;
  /** autocannon's own p50/p90/p99/max of each instance. */
  reported: { p50: number; p90: number; p99: number; max: number }[];
}

/**
 * POSTs tracker events to /api/event with autocannon. Without a rate, as fast as `CONNECTIONS`
 * connections go. With a rate, `groups` autocannon instances share the connections and the rate,
 * started 1/groups s apart: autocannon releases each connection's quota for a second at the
 * second's start, back to back, so a single instance offers its rate as a burst at full speed
 * followed by a pause, and staggered groups spread the same rate over the second.
 */
async function httpPhase(site: string, domain: string, opts: { duration: number; rate?: number; groups?: number }): Promise<LoadRun> {
  // Bodies and headers are prepared up front so the load generator, which shares the two cores
  // with the server, spends its time sending rather than building JSON.
  const variants = Array.from({ length: 8192 }, (_, i) => ({
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent': UAS[i % UAS.length],
      'x-forwarded-for': `${11 + (i % 200)}.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}`,
    },
    body: eventBody(i, site, domain),
  }));
  let n = 0;
  const groups = opts.rate ? (opts.groups ?? 1) : 1;
  const times = new ResponseTimes();
  const runGroup = async (g: number) => {
    await new Promise((r) => setTimeout(r, (g * 1000) / groups));
    const tracker = autocannon({
      url: `${BASE}/api/event`,
      connections: Math.max(1, Math.round(CONNECTIONS / groups)),
      duration: opts.duration,
      // A fixed offered rate measures latency at that load; without it the run finds the ceiling.
      ...(opts.rate ? { overallRate: Math.round(opts.rate / groups) } : {}),
      requests: [
        {
          method: 'POST',
          setupRequest: (req: autocannon.Request) => ({ ...req, ...variants[n++ % variants.length] }),
        },
      ],
    }) as unknown as Promise<autocannon.Result> & NodeJS.EventEmitter;
    // Every answered request's own latency, once each (see ResponseTimes).
    tracker.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) times.add(ms);
    });
    return tracker;
  };
  const results = await Promise.all(Array.from({ length: groups }, (_, g) => runGroup(g)));
  const byStatus: Record<string, number> = {};
  for (const r of results) for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) byStatus[code] = (byStatus[code] ?? 0) + (count ?? 0);
  const sum = (f: (r: autocannon.Result) => number) => results.reduce((acc, r) => acc + f(r), 0);
  return {
    sent: sum((r) => r.requests.sent),
    answered: sum((r) => r.requests.total),
    ok: sum((r) => r['2xx']),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    byStatus,
    eventsPerSec: sum((r) => r['2xx'] / (r.duration || opts.duration)),
    times,
    reported: results.map((r) => ({ p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max })),
  };
}

/**
 * Response times of a run, each request counted once. autocannon's own percentiles at a fixed
 * rate also hold its "coordinated omission" fill: with an expected interval of
 * Math.ceil(1 / rate) ms (1 ms for any per-connection rate) a response of L ms is recorded with
 * L-1, L-2, … 1 ms besides, which pulls its p50 down; here every request counts once.
 */
class ResponseTimes {
  private values = new Float64Array(1 << 16);
  private size = 0;

  add(ms: number): void {
    if (this.size === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = ms;
  }

  /** p50, p90, p99 and max in ms (nearest rank). */
  percentiles(): { p50: number; p90: number; p99: number; max: number } {
    const sorted = this.values.slice(0, this.size).sort();
    const at = (q: number) => sorted[Math.min(this.size - 1, Math.max(0, Math.ceil(q * this.size) - 1))] ?? 0;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
  }
}

async function writeNdjson(path: string, domain: string) {
  const out = createWriteStream(path);
  const start = Date.UTC(2026, 0, 1);
  for (let i = 0; i < LINES; i++) {
    const kind = i % 10 === 9 ? 'leave' : 'pageview';
    const line = JSON.stringify({
      timestamp: new Date(start + i * 1000).toISOString(),
      kind,
      visitorId: `v${i % 50_000}`,
      sessionId: `s${Math.floor(i / 5)}`,
      url: `https://${domain}/docs/page-${i % 500}`,
      referrer: REFERRERS[i % REFERRERS.length],
      countryCode: ['US', 'DE', 'FR', 'IN', 'BR'][i % 5],
      city: ['Boston', 'Berlin', 'Paris', 'Pune', 'Recife'][i % 5],
      browser: ['Chrome', 'Safari', 'Firefox'][i % 3],
      os: ['Windows', 'macOS', 'Android', 'iOS'][i % 4],
      device: ['Desktop', 'Mobile'][i % 2],
      ...(kind === 'leave' ? { durationMs: 5000 } : {}),
    });
    if (!out.write(line + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'sightline-bench-ingest-'));
  const dataDir = join(work, 'data');
  const { redis, close: closeRedis } = await connectRespRedis({ url: REDIS_URL });
  const now = Date.now();
  const account = await createAccount(redis, { email: `bench-${now}@bench.example`, password: 'bench bench bench' }, now);
  const key = await createApiKey(redis, { accountId: account.id, scope: 'write', name: 'bench' }, now);
  const mk = async (label: string) => {
    const domain = `${label}-${now.toString(36)}.bench.example`;
    const created = await createProject(redis, { name: label, domain, timeZone: 'UTC', ownerId: account.id }, now);
    if (!created.ok) throw new Error('could not create the bench project');
    return { domain, id: created.project.id };
  };
  const live = await mk('live');
  const imported = await mk('import');
  await closeRedis();

  const { loadavg, cpus } = await import('node:os');
  console.log(`# ingest benchmark — ${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`${hostCalibrationLine()}, before the run`);
  const server = await startServer(dataDir);
  let ok = 0;
  let refused = 0;
  let runs = 0;
  try {
    let cpuMark = cpuSeconds(server.pid!);
    let threadMark = cpuByThread(server.pid!);
    const report = (r: LoadRun) => {
      const cpuNow = cpuSeconds(server.pid!);
      const cpuUsed = cpuNow - cpuMark;
      cpuMark = cpuNow;
      const threadsNow = cpuByThread(server.pid!);
      const shares = threadShares(threadMark, threadsNow);
      threadMark = threadsNow;
      ok += r.ok;
      refused += r.non2xx;
      runs++;
      console.log(`requests: ${r.sent} sent, ${r.answered} answered: 2xx ${r.ok}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}; by status ${JSON.stringify(r.byStatus)}`);
      console.log(`throughput: ${Math.round(r.eventsPerSec)} events/s accepted`);
      const t = r.times.percentiles();
      const ms = (v: number) => v.toFixed(1);
      console.log(`latency, each request once: p50 ${ms(t.p50)} ms, p90 ${ms(t.p90)} ms, p99 ${ms(t.p99)} ms, max ${ms(t.max)} ms`);
      const [only] = r.reported;
      const own = r.reported.length === 1 ? `p50 ${only!.p50} ms, p90 ${only!.p90} ms, p99 ${only!.p99} ms, max ${only!.max} ms` : `per group, p99 ${r.reported.map((l) => l.p99).join(' / ')} ms`;
      console.log(`latency as autocannon reports it: ${own}`);
      console.log(`server CPU: ${cpuUsed.toFixed(1)} s, ${((cpuUsed / Math.max(1, r.answered)) * 1e6).toFixed(0)} µs per answered request (by thread: ${shares})`);
      return { eventsPerSec: r.eventsPerSec, p99: t.p99 };
    };
    const settle = async () => {
      // An overload leaves inserts and part merges behind; a rated phase measures steady state,
      // so it starts once they are done (and the settle time is not counted as load).
      await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
      cpuMark = cpuSeconds(server.pid!);
      threadMark = cpuByThread(server.pid!);
    };
    if (ONLY !== 'import') {
      console.log(`\n## 1a. POST /api/event, ceiling: ${CONNECTIONS} connections as fast as they go for ${CEILING_SECONDS} s`);
      const ceiling = report(await httpPhase(live.id, live.domain, { duration: CEILING_SECONDS })).eventsPerSec;
      await settle();
      console.log(`\n## 1b. POST /api/event, sustained: ${RATE} events/s offered over ${CONNECTIONS} connections for ${DURATION} s, in ${GROUPS} groups started ${Math.round(1000 / GROUPS)} ms apart`);
      const sustained = report(await httpPhase(live.id, live.domain, { duration: DURATION, rate: RATE, groups: GROUPS }));
      const { p99 } = sustained;
      console.log(`targets: ≥ 5000 events/s sustained ${sustained.eventsPerSec >= 5000 * 0.98 ? 'MET' : 'MISSED'} (ceiling ${Math.round(ceiling)}/s); p99 < 25 ms at that rate ${p99 < 25 ? 'MET' : 'MISSED'} (${p99.toFixed(1)} ms)`);
      if (BURST_SECONDS > 0) {
        await settle();
        console.log(`\n## 1c. The same rate as one autocannon instance: each connection's quota for a second sent back to back at its start (a burst at the ceiling, then a pause), for ${BURST_SECONDS} s`);
        const burst = report(await httpPhase(live.id, live.domain, { duration: BURST_SECONDS, rate: RATE }));
        console.log(`burst shape: ${Math.round(burst.eventsPerSec)} events/s accepted, p99 ${burst.p99.toFixed(1)} ms (not a target: it measures the ceiling's queue of ${CONNECTIONS} requests)`);
      }
      console.log(`server RSS after phase 1: ${peakRssMb(server.pid!).rss.toFixed(0)} MB (peak so far ${peakRssMb(server.pid!).hwm.toFixed(0)} MB)`);
    }
    if (ONLY !== 'event') {
      console.log(`\n## 2. Import: ${LINES.toLocaleString('en')} NDJSON lines, streamed`);
      const file = join(work, 'import.ndjson');
      const genStart = performance.now();
      await writeNdjson(file, imported.domain);
      console.log(`generated ${(statSync(file).size / 1e6).toFixed(0)} MB in ${((performance.now() - genStart) / 1000).toFixed(1)} s`);
      let maxRss = 0;
      const sampler = setInterval(() => {
        maxRss = Math.max(maxRss, peakRssMb(server.pid!).rss);
      }, 50);
      const cpuBefore = cpuSeconds(server.pid!);
      const threadsBefore = cpuByThread(server.pid!);
      const t0 = performance.now();
      const res = await fetch(`${BASE}/api/v1/projects/${imported.domain}/import`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key.key}`, 'Content-Type': 'application/x-ndjson', 'X-Import-Batch-Id': 'bench-1' },
        body: Readable.toWeb(createReadStream(file, { highWaterMark: 1 << 20 })) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      const answer = (await res.json()) as { imported: number; rejected: number };
      const secs = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      const lps = LINES / secs;
      console.log(`answer: HTTP ${res.status} ${JSON.stringify(answer)}`);
      // Only a complete import counts: a failed one answers fast.
      const met = res.status === 200 && answer.imported === LINES && lps >= 100_000;
      console.log(`throughput: ${Math.round(lps)} lines/s (${secs.toFixed(2)} s) — target ≥ 100000 ${met ? 'MET' : 'MISSED'}`);
      console.log(`server CPU: ${(cpuSeconds(server.pid!) - cpuBefore).toFixed(1)} s (by thread: ${threadShares(threadsBefore, cpuByThread(server.pid!))})`);
      console.log(`server RSS during import: max ${maxRss.toFixed(0)} MB sampled; process peak (maxRSS) ${peakRssMb(server.pid!).hwm.toFixed(0)} MB`);
    }
  } finally {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }

  console.log('\n## 3. Zero loss: rows in ClickHouse after the server flushed and stopped');
  const { client: ch } = await connectNodeClickHouse({ dataDir });
  const count = async (id: string) => {
    const rs = await ch.query({ query: 'SELECT count() AS n FROM events WHERE project_id = {id:String}', query_params: { id }, format: 'JSONEachRow' });
    return Number((await rs.json<{ n: string }>())[0].n);
  };
  const liveRows = await count(live.id);
  const importRows = await count(imported.id);
  // Requests still in flight when a run stops (at most one per connection per run) are cut off
  // client-side though the server may have stored them: rows lie between the 2xx answers and that.
  const inFlight = runs * CONNECTIONS;
  const lossless = liveRows >= ok && liveRows <= ok + inFlight;
  console.log(`live events: ${liveRows} rows for ${ok} 2xx answers (+${liveRows - ok} from requests cut off in flight, at most ${inFlight}; ${refused} refused) — ${lossless ? 'ZERO LOSS' : 'MISMATCH'}`);
  const expectedImport = ONLY === 'event' ? 0 : LINES;
  console.log(`imported: ${importRows} rows for ${expectedImport} lines — ${importRows === expectedImport ? 'OK' : 'MISMATCH'}`);
  await ch.close();
  rmSync(work, { recursive: true, force: true });
  console.log(`${hostCalibrationLine()}, after the run`);
  if (!lossless || importRows !== expectedImport) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

