import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { quarantineName, quarantineRecord, type Quarantine } from './quarantine.js';

/**
 * The Node quarantine: one NDJSON file per batch in `dir` (DATA_DIR/quarantine). Written to a
 * temporary name, synced, then renamed, so a crash leaves the whole record or none; the batch
 * leaves the journal only after this returns.
 */
export function fileQuarantine(dir: string): Quarantine {
  return {
    where: dir,
    async put(batch) {
      mkdirSync(dir, { recursive: true });
      const name = quarantineName(batch);
      const temp = join(dir, `.${name}.tmp`);
      const fd = openSync(temp, 'w');
      try {
        const bytes = Buffer.from(quarantineRecord(batch));
        for (let written = 0; written < bytes.byteLength; ) written += writeSync(fd, bytes, written);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, join(dir, name));
    },
  };
}
