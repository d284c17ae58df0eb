import { quarantineName, quarantineRecord, type Quarantine } from './quarantine.js';

/** The part of an R2 bucket the quarantine uses. */
export interface QuarantineBucket {
  put(key: string, value: string, options?: { httpMetadata?: { contentType?: string } }): Promise<unknown>;
}

/** The Workers quarantine: one NDJSON object per batch under `quarantine/{day}/` in the bucket. */
export function r2Quarantine(bucket: QuarantineBucket): Quarantine {
  return {
    where: 'R2 quarantine/',
    async put(batch) {
      const key = `quarantine/${batch.at.toISOString().slice(0, 10)}/${quarantineName(batch)}`;
      await bucket.put(key, quarantineRecord(batch), { httpMetadata: { contentType: 'application/x-ndjson' } });
    },
  };
}
