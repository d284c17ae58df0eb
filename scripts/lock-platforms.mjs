// The registry this project installs from publishes only chdb's linux-x64 engine; npm then leaves
// chdb's other optional platform packages out of package-lock.json and `npm ci` refuses the lock.
// Run after `npm install`: it lists them as optional, platform-bound entries that npm skips here.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const PLATFORMS = {
  '@chdb/lib-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  '@chdb/lib-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  '@chdb/lib-linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  '@chdb/lib-linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
};

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const wanted = lock.packages['node_modules/chdb']?.optionalDependencies ?? {};
let added = 0;
for (const [name, version] of Object.entries(wanted)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version, optional: true, ...PLATFORMS[name] };
  added++;
}
writeFileSync(LOCK, JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-platforms: ${added} entr${added === 1 ? 'y' : 'ies'} added`);
