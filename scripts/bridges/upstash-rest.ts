/**
 * The Upstash Redis REST protocol over a real Redis, for `wrangler dev` and the workerd tests:
 * `POST /` (one command), `/pipeline`, `/multi-exec`, Bearer token, `Upstash-Encoding: base64`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { createClient } from 'redis';
import { listenBridge, readBody, type RunningBridge } from './listen.js';

type Reply = unknown;

const encode = (v: Reply): Reply =>
  typeof v === 'string' ? Buffer.from(v, 'utf8').toString('base64') : Array.isArray(v) ? v.map(encode) : v;

async function readJson(req: IncomingMessage): Promise<unknown> {
  return JSON.parse((await readBody(req)) || 'null');
}

export interface UpstashBridgeOptions {
  redisUrl: string;
  token: string;
  port?: number;
  host?: string;
}

export async function startUpstashBridge(opts: UpstashBridgeOptions): Promise<RunningBridge> {
  const client = createClient({ url: opts.redisUrl, RESP: 2 });
  client.on('error', () => {});
  await client.connect();
  const run = async (cmd: unknown[]): Promise<{ result?: Reply; error?: string }> => {
    try {
      return { result: await client.sendCommand(cmd.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  };
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${opts.token}`) return send(401, { error: 'Unauthorized' });
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const shape = (r: { result?: Reply; error?: string }) => (r.error !== undefined ? r : { result: base64 ? encode(r.result) : r.result });
    try {
      const body = await readJson(req);
      const path = new URL(req.url ?? '/', 'http://bridge').pathname;
      if (path === '/pipeline' || path === '/multi-exec') {
        const cmds = body as unknown[][];
        if (path === '/multi-exec') {
          const tx = client.multi();
          for (const c of cmds) tx.addCommand(c.map(String));
          const replies = (await tx.exec()) as Reply[];
          return send(200, replies.map((r) => shape(r instanceof Error ? { error: r.message } : { result: r })));
        }
        const replies = [];
        for (const c of cmds) replies.push(shape(await run(c)));
        return send(200, replies);
      }
      const reply = await run(body as unknown[]);
      return send(reply.error !== undefined ? 400 : 200, shape(reply));
    } catch (err) {
      return send(400, { error: (err as Error).message });
    }
  });
  return listenBridge(server, opts, () => client.quit().catch(() => {}));
}
