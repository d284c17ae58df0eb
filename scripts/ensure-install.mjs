// `npm start` / `npm test` on a fresh clone: install dependencies once if they are missing.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

if (!existsSync(new URL('../node_modules/.package-lock.json', import.meta.url))) {
  console.error('[sightline] installing dependencies (npm ci)…');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
}
