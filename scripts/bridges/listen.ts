import type { IncomingMessage, Server } from 'node:http';

/** A started bridge: its base URL, the server, and how to stop it. */
export interface RunningBridge {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** The whole request body as UTF-8 text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Listens on `port` (0 = any free one) and `host` (loopback unless told otherwise); closing
 * stops the server first, then runs `afterClose` (e.g. to drop the bridge's own client).
 */
export function listenBridge(
  server: Server,
  opts: { port?: number; host?: string },
  afterClose: () => Promise<unknown> = async () => {},
): Promise<RunningBridge> {
  const host = opts.host ?? '127.0.0.1';
  return new Promise((resolve) => {
    server.listen(opts.port ?? 0, host, () => {
      const addr = server.address() as { port: number };
      resolve({
        url: `http://${host}:${addr.port}`,
        server,
        close: async () => {
          await new Promise<void>((done) => server.close(() => done()));
          await afterClose();
        },
      });
    });
  });
}
