/**
 * Builds the Worker as `wrangler deploy --dry-run` would upload it and prints its size, raw and
 * gzipped; exits 1 above the 1 MiB gzipped target. `npm run bundle:size`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT = 1024 * 1024;
const outdir = mkdtempSync(join(tmpdir(), 'sightline-bundle-'));
try {
  execFileSync('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  let raw = 0;
  let gzip = 0;
  for (const file of readdirSync(outdir).filter((f) => f.endsWith('.js') || f.endsWith('.mjs'))) {
    const bytes = readFileSync(join(outdir, file));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(JSON.stringify({ raw: kib(raw), gzip: kib(gzip), limitGzip: kib(LIMIT), ok: gzip <= LIMIT }));
  if (gzip > LIMIT) process.exit(1);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
