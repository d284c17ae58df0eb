import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { NodeSide } from './node-side.js';

declare module 'vitest' {
  export interface ProvidedContext extends NodeSide {}
}

/**
 * Starts node-side.ts (bridges + Node app) in its own Node process and hands its URLs to the
 * Worker as bindings (see vitest.config.ts). Its own process: chdb allows one engine per
 * process, and the Node code must load as Node loads it, not through the Worker build.
 */
export default async function setup(project: TestProject) {
  const script = fileURLToPath(new URL('./node-side.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const lines = createInterface({ input: child.stdout });
  const ready = await new Promise<NodeSide>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as NodeSide));
    child.once('exit', (code) => reject(new Error(`node-side.ts exited with ${code} before it was ready`)));
  });
  lines.on('line', (line) => console.log(`[node-side] ${line}`));
  for (const [key, value] of Object.entries(ready)) project.provide(key as keyof NodeSide, value);
  return async () => {
    child.kill('SIGTERM');
    await exited;
  };
}
