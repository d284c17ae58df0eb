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
  /** Inserts rows [from, to) except those in `skip` (sorted, already placed apart) under the dedup token `token`. */
  insert(from: number, to: number, skip: readonly number[], token: string): Promise<void>;
  /**
   * The dedup token of rows [from, to) without `skip`. It must depend only on the batch, the
   * range and `skip` (see skipSuffix), so a batch tried again (a retry, or a journal replay after
   * a crash) is cut the same way and ClickHouse drops the parts it already has.
   */
  tokenFor(from: number, to: number, skip: readonly number[]): string | Promise<string>;
  /** Where to cut [from, to) (at least from + 1, at most to - 1); the middle by default. */
  splitAt?(from: number, to: number): number;
  /** Whether a row of [from, to) that a data error names may be set apart (see below); yes by default. */
  setApartNamedRow?(from: number, to: number): boolean;
  /**
   * A failure that is not a data error: resolve `retry` (after waiting) to try the same rows
   * again, `split` to treat it as a data error, or throw to stop (the rows not yet placed stay
   * with the caller, see IsolationProgress).
   */
  onFailure(err: unknown, kind: Exclude<InsertErrorKind, 'data'>, attempt: number): Promise<'retry' | 'split'>;
  /** Told once, on the first data error, before splitting starts. */
  onSplit?(err: unknown): void;
  /**
   * Asked before each cut: when it answers true, the rows of a part that fails are refused as
   * they are, without looking further (a batch's isolation has a time budget). Nothing is stored
   * then that a replay, cutting at other moments, could store again under another token.
   */
  outOfTime?(): boolean;
}

/**
 * Inserts a batch so that rows ClickHouse refuses (a data error) cannot hold back the others:
 * the batch goes in whole when it can. On a data error that names its row (`(at row N)`: the
 * engines name the first bad row of the body) that row is tried alone, set apart, and the rest is
 * tried again as one part, until it goes in: k refused rows cost k refused attempts at the rest
 * (each parsed up to its next bad row, nothing stored), k single-row attempts and one insert that
 * stores. On one that names no row (e.g. a failure inside a materialized view), the rows are cut
 * in two and each half is tried the same way (about 2·k·log2(n/k) inserts). The refused rows are
 * answered in `refused`; everything else is stored exactly once, each part under its own token
 * (see tokenFor).
 */
export async function insertIsolatingRefused(plan: IsolationPlan, progress: IsolationProgress = { placed: 0, refused: [], inserts: 0 }): Promise<IsolationProgress> {
  let split = false;
  /** Places [from, to) except `skip` (rows placed apart). */
  const place = async (from: number, to: number, skip: number[]): Promise<void> => {
    // Every row before `placed` was placed already, so once [from, to) is, every row before `to` is.
    const done = () => {
      if (progress.placed >= from && progress.placed < to) progress.placed = to;
    };
    for (let attempt = 1; ; attempt++) {
      const left = to - from - skip.length;
      if (left === 0) return done();
      let failure: unknown;
      try {
        progress.inserts++;
        await plan.insert(from, to, skip, await plan.tokenFor(from, to, skip));
        return done();
      } catch (err) {
        failure = err;
      }
      const kind = classifyInsertError(failure);
      const action = kind === 'data' ? 'split' : await plan.onFailure(failure, kind, attempt);
      if (action === 'retry') continue;
      if (left === 1) {
        let index = from;
        while (skip.includes(index)) index++;
        progress.refused.push({ index, error: insertErrorText(failure) });
        return done();
      }
      if (!split) {
        split = true;
        plan.onSplit?.(failure);
      }
      attempt = 0;
      const named = kind === 'data' && (plan.setApartNamedRow?.(from, to) ?? true) ? refusedRowOf(failure) : undefined;
      // The named-th row of the body sent: count past the rows it left out.
      let bad = from - 1;
      if (named !== undefined && named <= left) for (let seen = 0; seen < named; ) if (!skip.includes(++bad)) seen++;
      if (plan.outOfTime?.()) {
        // No time to look further: the part is refused as it is. (Storing the rows before the
        // named one would depend on timing, so a replay could store them again under another token.)
        const error = `not isolated in time, refused with its part: ${insertErrorText(failure)}`;
        for (let index = from; index < to; index++) if (!skip.includes(index)) progress.refused.push({ index, error });
        return done();
      }
      if (bad >= from) {
        // Alone it is refused (or, if the engine named the wrong row, stored under its own token).
        await place(bad, bad + 1, []);
        skip = [...skip, bad].sort((a, b) => a - b);
        continue;
      }
      const cut = plan.splitAt?.(from, to) ?? from + Math.floor((to - from) / 2);
      if (!(cut > from && cut < to)) throw new Error(`cannot split rows ${from}-${to} at ${cut}`);
      await place(from, cut, skip.filter((i) => i < cut));
      await place(cut, to, skip.filter((i) => i >= cut));
      return done();
    }
  };
  if (plan.rows > 0 && progress.placed < plan.rows) await place(progress.placed, plan.rows, []);
  progress.refused.sort((a, b) => a.index - b.index);
  return progress;
}

/**
 * A short, stable text for a set of rows left out of a part (FNV-1a over the indexes): part of
 * the part's dedup token, so the same rows left out give the same token.
 */
export function skipSuffix(skip: readonly number[]): string {
  if (skip.length === 0) return '';
  let hash = 0x811c9dc5;
  for (const index of skip) {
    for (let shift = 0; shift < 32; shift += 8) {
      hash ^= (index >>> shift) & 0xff;
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
  }
  return `~${skip.length}.${hash.toString(16)}`;
}

/** The token of a part of a batch sealed under `token`: the batch's own for the whole of it. */
export function partToken(token: string, rows: number, from: number, to: number, skip: readonly number[] = []): string {
  return from === 0 && to === rows && skip.length === 0 ? token : `${token}:${from}-${to}${skipSuffix(skip)}`;
}
