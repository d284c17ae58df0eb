import { classifyInsertError, insertErrorText, refusedRowOf, type InsertErrorKind } from '../adapters/clickhouse-errors.js';

/** A row ClickHouse refused on its own, by its index in the batch, with the engine's error. */
export interface RefusedRow {
  index: number;
  error: string;
}

/** How far an isolation got: every row before `placed` is stored or in `refused`. */
export interface IsolationProgress {
  placed: number;
  refused: RefusedRow[];
  /** Inserts tried (the whole batch counts one). */
  inserts: number;
}

/** One batch to insert: the caller owns the rows, their encoding and the waiting. */
export interface IsolationPlan {
  rows: number;
  /** Inserts rows [from, to) under the dedup token `token`. */
  insert(from: number, to: number, token: string): Promise<void>;
  /**
   * The dedup token of rows [from, to). It must depend only on the batch and the range, so a
   * batch tried again (a retry, or a journal replay after a crash) splits the same way and
   * ClickHouse drops the parts it already has.
   */
  tokenFor(from: number, to: number): string | Promise<string>;
  /** Where to cut [from, to) (at least from + 1, at most to - 1); the middle by default. */
  splitAt?(from: number, to: number): number;
  /** Whether [from, to) may be cut around the row a data error names (see below); yes by default. */
  cutAtNamedRow?(from: number, to: number): boolean;
  /**
   * A failure that is not a data error: resolve `retry` (after waiting) to try the same rows
   * again, `split` to treat it as a data error, or throw to stop (the rows not yet placed stay
   * with the caller, see IsolationProgress).
   */
  onFailure(err: unknown, kind: Exclude<InsertErrorKind, 'data'>, attempt: number): Promise<'retry' | 'split'>;
  /** Told once, on the first data error, before splitting starts. */
  onSplit?(err: unknown): void;
}

/**
 * Inserts a batch so that rows ClickHouse refuses (a data error) cannot hold back the others:
 * the batch goes in whole when it can. On a data error that names its row (`(at row N)`, the
 * first bad row of the body) the rows before it go in as one part, the named row alone, and the
 * rows after it are tried the same way; on one that does not, the rows are cut in two and each
 * half is tried the same way. The refused rows end up alone and are answered in `refused`;
 * everything else is stored exactly once (each part under its own token, see tokenFor). Parts
 * are tried in row order, one at a time: k refused rows cost about k stored parts and 2k refused
 * inserts (about 2·k·log2(n/k) inserts when errors name no row).
 */
export async function insertIsolatingRefused(plan: IsolationPlan, progress: IsolationProgress = { placed: 0, refused: [], inserts: 0 }): Promise<IsolationProgress> {
  let split = false;
  const place = async (start: number, to: number): Promise<void> => {
    let from = start;
    let attempt = 0;
    while (from < to) {
      attempt++;
      let failure: unknown;
      try {
        progress.inserts++;
        await plan.insert(from, to, await plan.tokenFor(from, to));
        progress.placed = to;
        return;
      } catch (err) {
        failure = err;
      }
      const kind = classifyInsertError(failure);
      const action = kind === 'data' ? 'split' : await plan.onFailure(failure, kind, attempt);
      if (action === 'retry') continue;
      if (to - from === 1) {
        progress.refused.push({ index: from, error: insertErrorText(failure) });
        progress.placed = to;
        return;
      }
      if (!split) {
        split = true;
        plan.onSplit?.(failure);
      }
      attempt = 0;
      const named = kind === 'data' && (plan.cutAtNamedRow?.(from, to) ?? true) ? refusedRowOf(failure) : undefined;
      if (named !== undefined && named <= to - from) {
        const bad = from + named - 1;
        if (bad > from) await place(from, bad);
        await place(bad, bad + 1);
        from = bad + 1;
        continue;
      }
      const cut = plan.splitAt?.(from, to) ?? from + Math.floor((to - from) / 2);
      if (!(cut > from && cut < to)) throw new Error(`cannot split rows ${from}-${to} at ${cut}`);
      await place(from, cut);
      from = cut;
    }
    progress.placed = to;
  };
  if (plan.rows > 0) await place(progress.placed, plan.rows);
  return progress;
}

/** The token of a part of a batch sealed under `token`: the batch's own for the whole of it. */
export function partToken(token: string, rows: number, from: number, to: number): string {
  return from === 0 && to === rows ? token : `${token}:${from}-${to}`;
}
