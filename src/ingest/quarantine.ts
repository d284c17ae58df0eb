/**
 * Where rows ClickHouse refused as invalid are kept (DATA_DIR/quarantine on Node, R2
 * `quarantine/` on Workers), so a refused row is never silently lost: it can be read, fixed and
 * inserted again by hand. One record per batch, NDJSON, one line per row:
 * `{"table","token","error","at","row"}` where `row` is the row as it was sent (the JSON
 * object, or the raw line when it was not valid JSON).
 */
export interface QuarantinedBatch {
  table: 'events' | 'bot_hits';
  /** The dedup token of the batch the rows came from; the same batch quarantined again replaces its record. */
  token: string;
  /** The refused rows as sent (one JSON row each, without a newline) and the error of each. */
  rows: { line: string; error: string }[];
  at: Date;
}

export interface Quarantine {
  /** Keeps the rows; resolves once they are durable. */
  put(batch: QuarantinedBatch): Promise<void>;
  /** Where the records go, for log lines. */
  readonly where: string;
}

/** The record's name: deterministic, so a batch replayed after a crash overwrites its own record. */
export const quarantineName = (batch: Pick<QuarantinedBatch, 'table' | 'token'>) => `${batch.table}.${batch.token.replace(/[^A-Za-z0-9_.:-]/g, '_')}.ndjson`;

/** The record's content: one NDJSON line per refused row. */
export function quarantineRecord(batch: QuarantinedBatch): string {
  const at = batch.at.toISOString();
  let out = '';
  for (const { line, error } of batch.rows) {
    let row: unknown = line;
    try {
      row = JSON.parse(line);
    } catch {
      // Kept as the text it was.
    }
    out += `${JSON.stringify({ table: batch.table, token: batch.token, error, at, row })}\n`;
  }
  return out;
}

/** Without a store (tests, tools): the refused rows go to the log, one line each. */
export function logQuarantine(log: (line: string) => void): Quarantine {
  return {
    where: 'the log',
    async put(batch) {
      for (const line of quarantineRecord(batch).split('\n')) if (line) log(`[sightline] ingest: quarantined ${line}`);
    },
  };
}
