import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Temporary folders a test file makes (`make('journal')`) and removes together in afterAll (`removeAll()`). */
export function tempDirs() {
  const dirs: string[] = [];
  return {
    make(label: string): string {
      const dir = mkdtempSync(join(tmpdir(), `sightline-${label}-`));
      dirs.push(dir);
      return dir;
    },
    removeAll(): void {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
