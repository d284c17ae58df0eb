import { createServer, connect, type Server, type Socket } from 'node:net';
import { startClickHouseBridge } from '../../scripts/bridges/clickhouse-http.js';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';

/**
 * How the proxy treats connections:
 * - `up`: passes bytes both ways;
 * - `refuse`: nothing listens on the port (connections are refused) and open ones are dropped;
 * - `hang`: accepts and reads requests, never answers;
 * - `cut`: passes the request on, then drops the connection when the answer comes (the upstream
 *   did the work, the client never hears of it).
 */
export type FaultMode = 'up' | 'refuse' | 'hang' | 'cut';

export interface FaultProxy {
  url: string;
  port: number;
  mode(next: FaultMode): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy in front of `upstream` (host:port) whose faults the test switches on and off. */
export async function startFaultProxy(upstream: { host: string; port: number }, initial: FaultMode = 'up'): Promise<FaultProxy> {
  let mode: FaultMode = initial;
  const sockets = new Set<Socket>();
  const onConnection = (client: Socket) => {
    sockets.add(client);
    let server: Socket | null = null;
    const drop = () => {
      client.destroy();
      server?.destroy();
    };
    client.on('close', () => {
      sockets.delete(client);
      server?.destroy();
    });
    client.on('error', drop);
    client.on('data', (chunk) => {
      if (mode === 'hang') return;
      if (!server) {
        server = connect(upstream.port, upstream.host);
        sockets.add(server);
        server.on('close', () => {
          sockets.delete(server!);
          client.destroy();
        });
        server.on('error', drop);
        server.on('data', (answer) => {
          if (mode === 'cut') drop();
          else client.write(answer);
        });
      }
      server.write(chunk);
    });
  };
  let listener: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        listener = s;
        resolve();
      });
    });
  const unlisten = async () => {
    const s = listener;
    listener = null;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  if (initial === 'refuse') {
    // Reserve a port, then stop listening on it.
    await listen();
    await unlisten();
  } else await listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    async mode(next) {
      // Connections opened under the old mode do not carry over (keep-alive sockets included).
      for (const socket of sockets) socket.destroy();
      mode = next;
      if (next === 'refuse') await unlisten();
      else if (!listener) await listen();
    },
    close: unlisten,
  };
}

/**
 * A ClickHouse HTTP endpoint over `clickhouse` (the bridge over the embedded engine) behind a fault
 * proxy: what a server process is pointed at (`CLICKHOUSE_URL` = `proxy.url`) when a test makes
 * ClickHouse hang or refuse.
 */
export async function startProxiedClickHouse(clickhouse: ClickHouseClient): Promise<{ proxy: FaultProxy; close(): Promise<void> }> {
  const bridge = await startClickHouseBridge({ clickhouse });
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: Number(new URL(bridge.url).port) });
  return {
    proxy,
    async close() {
      await proxy.close();
      await bridge.close();
    },
  };
}
