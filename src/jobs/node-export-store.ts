import { mkdir, readdir, readFile, rm, stat, writeFile, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ExportStore } from '../deps.js';

/** Store names are `{projectId}/{file}`; anything else could escape the directory. */
const NAME = /^[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9._-]{1,300}$/;
const PREFIX = /^[A-Za-z0-9_-]{1,64}\/$/;

function checked(name: string, pattern: RegExp): string {
  if (!pattern.test(name) || name.includes('..')) throw new Error(`invalid export name: ${name}`);
  return name;
}

/** Scheduled exports on Node: files under `dir` (DATA_DIR/exports), one folder per project. */
export function nodeExportStore(dir: string): ExportStore {
  const root = resolve(dir);
  return {
    async put(name, csv) {
      const path = join(root, checked(name, NAME));
      await mkdir(join(path, '..'), { recursive: true });
      // Written aside then renamed, so a reader never sees half a file.
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, csv, 'utf8');
      await rename(tmp, path);
    },
    async list(prefix) {
      const folder = join(root, checked(prefix, PREFIX));
      const names = await readdir(folder).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [] as string[];
        throw err;
      });
      const files = names.filter((n) => n.endsWith('.csv'));
      return Promise.all(
        files.map(async (n) => {
          const s = await stat(join(folder, n));
          return { name: prefix + n, size: s.size, createdAt: s.mtime.toISOString() };
        }),
      );
    },
    async get(name) {
      try {
        return await readFile(join(root, checked(name, NAME)), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async removeAll(prefix) {
      await rm(join(root, checked(prefix, PREFIX)), { recursive: true, force: true });
    },
  };
}
