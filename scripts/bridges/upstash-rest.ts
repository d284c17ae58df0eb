/**
 * The Upstash Redis REST protocol over a real Redis, for `wrangler dev` and the workerd tests:
 * `POST /` (one command), `/pipeline`, `/multi-exec`, Bearer token, `Upstash-Encoding: base64`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createClient } from 'redis';

type Reply = unknown;

const encode = (v: Reply): Reply =>
  typeof v === 'string' ? Buffer.from(v, 'utf8').toString('base64') : Array.isArray(v) ? v.map(encode) : v;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
}

export interface UpstashBridgeOptions {
  redisUrl: string;
  token: string;
  port?: number;
  host?: string;
}

export async function startUpstashBridge(opts: UpstashBridgeOptions): Promise<{ url: string; server: Server; close(): Promise<void> }> {
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
  return new Promise((resolve) => {
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      const addr = server.address() as { port: number };
      resolve({
        url: `http://${opts.host ?? '127.0.0.1'}:${addr.port}`,
        server,
        close: async () => {
          await new Promise<void>((done) => server.close(() => done()));
          await client.quit().catch(() => {});
        },
      });
    });
  });
}
