import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback port nothing listens on right now (the OS picks it; released before use). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** A running `npm start` (the real Node entry) as a child process. */
export interface NodeServer {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Ends it with `signal` and resolves with its exit code once it is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `src/entry/node.ts` as `npm start` does (tsx), with `env` on top of this process's
 * environment, and resolves once it prints "listening on". The entry runs in the spawned node
 * itself (`node --import tsx`, not the `npx tsx` wrapper), so a signal reaches the server and
 * not a parent that would leave it orphaned.
 */
export async function startNodeServer(env: Record<string, string>, timeoutMs = 60_000): Promise<NodeServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/node.ts'], {
    env: { ...process.env, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const started = Date.now();
  while (!out.includes('listening on')) {
    if (child.exitCode !== null || Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    url: `http://127.0.0.1:${env.PORT}`,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const [code] = await exited;
      return code as number | null;
    },
  };
}
