import * as fs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileJournal } from '../../src/ingest/journal.js';

// A disk that fills in the middle of a write: the first writeSync stores half, the next fails.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, writeSync: vi.fn(real.writeSync) };
});

const dirs: string[] = [];
afterEach(() => {
  vi.mocked(fs.writeSync).mockReset();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('fileJournal append', () => {
  it('leaves nothing of rows it could not write whole', async () => {
    const real = (await vi.importActual<typeof import('node:fs')>('node:fs')).writeSync;
    const dir = mkdtempSync(join(tmpdir(), 'sightline-journal-'));
    dirs.push(dir);
    const journal = fileJournal(dir);
    const first = Buffer.from('{"a":1}\n');
    vi.mocked(fs.writeSync).mockImplementation(real as never);
    journal.append('events', first);

    const second = Buffer.from('{"b":2}\n{"c":3}\n');
    let calls = 0;
    vi.mocked(fs.writeSync).mockImplementation(((fd: number, buffer: Uint8Array, offset: number) => {
      if (calls++ > 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return real(fd, buffer, offset, Math.floor((buffer.byteLength - offset) / 2));
    }) as never);
    expect(() => journal.append('events', second)).toThrow(/ENOSPC/);
    expect(calls).toBe(2);
    // Only the rows acknowledged before the failure are in the file.
    expect(readFileSync(join(dir, 'open-events.jsonl'), 'utf8')).toBe('{"a":1}\n');

    vi.mocked(fs.writeSync).mockImplementation(real as never);
    journal.append('events', second);
    expect(readFileSync(join(dir, 'open-events.jsonl'), 'utf8')).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });
});
