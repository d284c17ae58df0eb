import type { ClosedHours, DataVersions } from '../adapters/data-version.js';
import type { Deps } from '../deps.js';
import type { Project } from '../projects/store.js';
import { AnswerRefresher, type RefreshOptions } from './answer-refresh.js';
import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import { foregroundOf, inBackground, isBackground, promote } from '../adapters/coalesced-reads.js';
import { resolveRanges, type RangeAsked } from './project-range.js';
import { readAndStamp } from './latest-row.js';
import { queryRows } from './query.js';

/**
 * Reused answers (README "Answer cache"). An answer is reused only when nothing it depends on
 * can have changed: the same question (report, role, project record, parsed input), the same
 * data version of the project (moved by every write that reached ClickHouse), and a clock that
 * moved only where no row can be: every stored row of the project is older than the first
 * answer's now, so the rows up to a later now are the same rows. Only the answer's own `to`
 * (that first now) is restamped to the later now. Bounds that move with the clock among stored
 * rows — a compared range's end, `24h`'s start and its compared range's start — let an answer be
 * reused only when no row of the project lies between the bound then and now (noEventIn: the
 * instants of the bound's 15-minute cell read once per data version), each restamped too.
 * Realtime is never reused. Every other period's bounds and buckets, a compared range's start and
 * buckets, and `24h`'s hour buckets move only on the 15-minute grid every zone's hours and days
 * fall on, which is part of the key.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Stored>();
  /** Answers being computed, and the client each computes with (a refresh's goes in the background until a user joins it). */
  private readonly pending = new Map<string, { run: Promise<Computed>; clickhouse: ClickHouseClient }>();
  private readonly latest = new Map<string, Promise<number>>();
  /** The instants of the events of a 15-minute cell a moving bound lies in, per project and cell, at one data version (null: too many to keep). */
  private readonly cellRows = new Map<string, { version: string; rows: Promise<Float64Array | null> }>();
  private bytes = 0;
  /** Answers computed and answers reused, for the benchmark and tests. */
  readonly counts = { computed: 0, reused: 0 };
  /** The same for shared parts (sharedPart), counted apart so `counts` counts whole answers. */
  readonly partCounts = { computed: 0, reused: 0 };
  /** Answers kept fresh after writes (answer-refresh.ts), when the cache was given refresh options. */
  readonly refresher: AnswerRefresher | undefined;

  constructor(
    readonly versions: DataVersions,
    private readonly limits: { maxEntries: number; maxBytes: number } = { maxEntries: 5000, maxBytes: 64 * 1024 * 1024 },
    refresh?: RefreshOptions,
  ) {
    this.refresher = refresh && refresh.watchMs > 0 ? new AnswerRefresher(refresh) : undefined;
  }

  /** Runs `compute` at one clock read, or answers what it answered before when that is still the answer. */
  async answer<A>(deps: Deps, question: Question, compute: (deps: Deps) => Promise<A>): Promise<A> {
    const refresher = this.refresher;
    if (!refresher || question.name.startsWith(PART)) return this.answerAt(deps, question, compute);
    return refresher.asked(() =>
      this.answerAt(deps, question, compute, (key) =>
        // A refresh's reads wait behind users' until a user asks the same question (answerAt promotes it).
        refresher.watch(key, question.project.id, (clock) => this.answerAt({ ...deps, clock, clickhouse: inBackground(deps.clickhouse) }, question, compute)),
      ),
    );
  }

  /** Rows of these projects were written (the versioned row store tells): their recently asked answers are computed again. */
  written(projectIds: readonly string[] | 'all'): void {
    this.refresher?.written(projectIds);
  }

  /** Stops keeping answers fresh (before ClickHouse closes). */
  async close(): Promise<void> {
    await this.refresher?.close();
  }

  private async answerAt<A>(deps: Deps, question: Question, compute: (deps: Deps) => Promise<A>, watch?: (key: string) => void): Promise<A> {
    const now = deps.clock.now();
    const projectId = question.project.id;
    const counts = question.name.startsWith(PART) ? this.partCounts : this.counts;
    let version: string;
    // The closed-hours version comes in the same read, so reads of closed hours' sums need no round trip of their own (src/analysis/closed-hours.ts).
    let closedHours: ClosedHours;
    let stamped: number | null;
    try {
      ({ current: version, closedHours, latestRow: stamped } = await this.versions.both(projectId));
    } catch {
      return compute(deps);
    }
    // Reads shared by every question of the project go as a user's, whoever asks them first.
    const shared = { clickhouse: foregroundOf(deps.clickhouse) };
    // Unknown (the query failed) counts as a row in the future: nothing kept, every check asked of ClickHouse.
    const latest = stamped !== null ? Promise.resolve(stamped) : this.latestRow(shared, projectId, version, now).catch(() => Number.POSITIVE_INFINITY);
    const pinned: Deps = {
      ...deps,
      clock: { now: () => now },
      latestRow: { projectId, at: latest },
      closedHours: { projectId, state: closedHours },
    };
    if (!reusable(question, now)) return compute(pinned);
    // The compared range's end at this clock read, resolved as the route resolves it; null when that
    // failed (the computation then answers the error, and nothing is kept).
    const compared = question.comparedRange?.(pinned).catch(() => null);
    const asked = JSON.stringify([question.name, question.role ?? '', question.project, canonical(question.input)]);
    const slidingStart = startFollowsClock(question);
    if (watch && !slidingStart) watch(asked);
    // A `24h` answer refreshed where its start passes many events is no longer the answer when the next viewer comes.
    else if (watch) {
      const quiet = (rows: Float64Array | null) => rows !== null && rows.length <= QUIET_START_CELL_MOST;
      void this.rowsOfCell(shared, projectId, version, cellOf(now) - DAY_MS).then((rows) => quiet(rows) && watch(asked), () => {});
    }
    // `asked` is JSON (it ends in `]`), so appending the cell and version cannot make two keys meet.
    const key = `${asked}${Math.floor(now / GRID_MS)}/${version}`;
    // No await between this lookup and `pending.set` below when nothing is found: a question asked
    // several times at once then runs once.
    const running = this.entries.has(key) ? undefined : this.pending.get(key);
    // A user now waits for it: its reads go as a user's.
    if (running && !isBackground(deps.clickhouse)) promote(running.clickhouse);
    const found = this.entries.get(key) ?? (running ? await running.run.catch(() => undefined) : undefined);
    const moves = found?.keep && found.at <= now ? await this.movesIfUnchanged({ clock: pinned.clock, ...shared }, projectId, version, found, compared, slidingStart) : null;
    if (found && moves) {
      this.touch(key);
      counts.reused++;
      return restamp(found.answer, moves) as A;
    }
    const run = (async (): Promise<Computed> => {
      const answer = await compute(pinned);
      const range = compared ? await compared : undefined;
      return { answer, at: now, keep: (await latest) < now && range !== null, ...(range ? { compared: range } : {}) };
    })();
    this.pending.set(key, { run, clickhouse: deps.clickhouse });
    try {
      const computed = await run;
      counts.computed++;
      if (computed.keep) this.store(key, computed);
      return computed.answer as A;
    } finally {
      if (this.pending.get(key)?.run === run) this.pending.delete(key);
    }
  }

  /**
   * readAndStamp at `version` when Redis keeps no latest-row stamp for it: rows do not change
   * under one version, and a bound stays one as days pass, so one query per version serves all,
   * and every other reader of the version finds its stamp.
   */
  private latestRow(deps: Pick<Deps, 'clickhouse'>, projectId: string, version: string, now: number): Promise<number> {
    const key = `${projectId}/${version}`;
    let found = this.latest.get(key);
    if (!found) {
      found = readAndStamp(deps, this.versions, projectId, version, now);
      found.catch(() => this.latest.delete(key));
      if (this.latest.size >= this.limits.maxEntries) this.latest.delete(this.latest.keys().next().value!);
      this.latest.set(key, found);
    }
    return found;
  }

  /**
   * The instants to restamp (`[then, now]` pairs) when `found`, kept at an earlier clock read of
   * this data version and grid cell, is still the answer at `deps`' clock; null when it is not: a
   * stored row has left the start of its range (`slidingStart`: `24h`) or of its compared range, or
   * its compared range's end has moved past one, or the compared range could not be resolved.
   */
  private async movesIfUnchanged(
    deps: Pick<Deps, 'clock' | 'clickhouse'>,
    projectId: string,
    version: string,
    found: Computed,
    compared: Promise<ComparedRange | null> | undefined,
    slidingStart: boolean,
  ): Promise<[number, number][] | null> {
    const now = deps.clock.now();
    const moves: [number, number][] = [[found.at, now]];
    // A range counts its start and its end: rows in [then, now) of a start leave it, rows in (then, now] of an end join it.
    const checks: [move: [number, number], counted: 'start' | 'end'][] = [];
    if (slidingStart) checks.push([[found.at - DAY_MS, now - DAY_MS], 'start']);
    if (compared) {
      const range = await compared;
      if (range === null || found.compared === undefined) return null;
      // The compared start moves only where the request's does (`24h`); elsewhere it stays on its day.
      checks.push([[found.compared.from, range.from], 'start'], [[found.compared.end, range.end], 'end']);
    }
    for (const [move, counted] of checks) {
      if (move[0] === move[1]) continue;
      if (!restampable(move)) return null;
      const [lo, hi] = move[0] < move[1] ? move : [move[1], move[0]];
      // Instants are whole milliseconds: (lo, hi] is [lo + 1, hi + 1).
      const shift = counted === 'start' ? 0 : 1;
      if (!(await this.noEventIn(deps, projectId, version, lo + shift, hi + shift))) return null;
      moves.push(move);
    }
    return moves;
  }

  /**
   * Whether the project has no event in [lo, hi): read from the instants of the 15-minute cell the
   * gap lies in (rowsOfCell). A gap across cells, or in a cell of more than CELL_MOST events, counts
   * as holding one: a moving bound stays in one cell while the clock does (every shift is whole
   * days or years in a zone on the 15-minute grid), and a cell that busy is passed within seconds.
   */
  private async noEventIn(deps: Pick<Deps, 'clickhouse'>, projectId: string, version: string, lo: number, hi: number): Promise<boolean> {
    const cell = cellOf(lo);
    if (cellOf(hi - 1) !== cell) return false;
    const rows = await this.rowsOfCell(deps, projectId, version, cell);
    return rows !== null && !rowsIn(rows, lo, hi);
  }

  /**
   * The instants (epoch ms, ascending) of the project's events in the 15-minute cell from `cell`:
   * one read per data version and cell answers every later ask whether a moving bound in it passed
   * an event (rows do not change under one version). Null when it holds more than CELL_MOST.
   */
  private rowsOfCell(deps: Pick<Deps, 'clickhouse'>, projectId: string, version: string, cell: number): Promise<Float64Array | null> {
    const key = `${projectId}/${cell}`;
    const kept = this.cellRows.get(key);
    if (kept?.version === version) return kept.rows;
    // A project's later version replaces its earlier one: a busy site moves it every few seconds.
    this.cellRows.delete(key);
    const params = { projectId, from: toClickHouseDateTime64(cell), to: toClickHouseDateTime64(cell + GRID_MS), most: CELL_MOST + 1 };
    const rows = queryRows(deps, CELL_ROWS_SQL, params, { at: 'number' }).then((found) => (found.length > CELL_MOST ? null : Float64Array.from(found, (r) => r.at)));
    rows.catch(() => {
      if (this.cellRows.get(key)?.rows === rows) this.cellRows.delete(key);
    });
    if (this.cellRows.size >= CELLS_KEPT) this.cellRows.delete(this.cellRows.keys().next().value!);
    this.cellRows.set(key, { version, rows });
    return rows;
  }

  private store(key: string, computed: Computed): void {
    const size = JSON.stringify(computed.answer)?.length ?? 0;
    if (size > this.limits.maxBytes / 16) return;
    this.drop(key);
    this.entries.set(key, { ...computed, size });
    this.bytes += size;
    while (this.entries.size > this.limits.maxEntries || this.bytes > this.limits.maxBytes) this.drop(this.entries.keys().next().value!);
  }

  /** Least recently used first: a reused entry moves to the end. */
  private touch(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.size;
    this.entries.delete(key);
  }
}

/**
 * `run` answering through the deps' answer cache when they have one (the entry points give it),
 * its questions named `name`: the same function with the same signature, for a report's or an
 * endpoint's definition.
 */
export function runThroughAnswerCache<C extends { deps: Deps; project: Project; role?: string }, I, A>(name: string, run: (ctx: C, input: I) => Promise<A>) {
  return (ctx: C, input: I): Promise<A> => {
    const compute = (deps: Deps) => run({ ...ctx, deps }, input);
    if (!ctx.deps.answers) return compute(ctx.deps);
    const comparedRange = comparedRangeOf(ctx.project, input);
    return ctx.deps.answers.answer(ctx.deps, { name, project: ctx.project, role: ctx.role, input, ...(comparedRange ? { comparedRange } : {}) }, compute);
  };
}

/**
 * `run` for answers the cache never keeps (realtime: its window moves with the clock): still a user's
 * question to the refresher, which starts no refresh while one runs (`answer` holds it for the
 * rest), so such a request does not wait behind a round of refreshes after every flushed batch.
 */
export function runAsUserQuestion<C extends { deps: Pick<Deps, 'answers'> }, I, A>(run: (ctx: C, input: I) => Promise<A>) {
  return (ctx: C, input: I): Promise<A> => {
    const refresher = ctx.deps.answers?.refresher;
    return refresher ? refresher.asked(() => run(ctx, input)) : run(ctx, input);
  };
}

/**
 * For an input that asks for a comparison (`compare`, with the range fields every report and
 * analysis endpoint resolves through project-range.ts): the start and last instant of the compared
 * range at the deps' clock, resolved exactly as the route resolves them.
 */
function comparedRangeOf(project: Project, input: unknown): ((deps: Deps) => Promise<ComparedRange>) | undefined {
  if (typeof input !== 'object' || input === null || (input as RangeAsked).compare === undefined) return undefined;
  return async (deps) => {
    const { comparison } = await resolveRanges(deps, project, input as RangeAsked);
    if (!comparison) throw new Error('a comparison was asked for and none resolved');
    return { from: comparison.from, end: comparison.now };
  };
}

/**
 * A part of several answers that their reports compute alike (the device, browser and OS lists;
 * the period's visits by source), through the deps' answer cache when they have one: the requests
 * a dashboard sends together for one period then compute it once, under the same rules as whole
 * answers (same data version, clock and grid cell). `input` names the range only (`period`,
 * `from`, `to`) and must be the request's own range, never a compared one (which ends at an
 * instant among stored rows). A part is shared only inside an answer the cache is computing for
 * the same project (its deps carry the pinned clock and `latestRow`), so it runs at the very clock
 * read its range was resolved at; elsewhere, and without an answer cache, it is computed.
 */
export function sharedPart<A>(ctx: { deps: Deps; project: Project }, name: string, input: { period: string; from?: string | undefined; to?: string | undefined }, compute: (deps: Deps) => Promise<A>): Promise<A> {
  if (!sharesParts(ctx)) return compute(ctx.deps);
  return ctx.deps.answers!.answer(ctx.deps, { name: `${PART}${name}`, project: ctx.project, input: { period: input.period, from: input.from, to: input.to } }, compute);
}

/** Whether sharedPart shares here: inside an answer the cache is computing for this project. */
export const sharesParts = (ctx: { deps: Deps; project: Project }): boolean => ctx.deps.answers !== undefined && ctx.deps.latestRow?.projectId === ctx.project.id;

/** What identifies a question: who asks it of which project, and its parsed input. */
export interface Question {
  name: string;
  project: Project;
  role?: string;
  input: unknown;
  /** With a comparison: the compared range's start and last instant at the deps' clock (without it, a comparison is never reused). */
  comparedRange?: (deps: Deps) => Promise<ComparedRange>;
}

/** A compared range's start (inclusive) and last instant counted, epoch ms. */
interface ComparedRange {
  from: number;
  end: number;
}

interface Computed {
  answer: unknown;
  /** The clock read it was computed at (its `to`). */
  at: number;
  /** Whether every row of the project was older than `at` (else it is never reused). */
  keep: boolean;
  /** The compared range at `at`, for an answer with a comparison. */
  compared?: ComparedRange;
}
type Stored = Computed & { size: number };

/** Prefix of a shared part's question name (its own namespace: no report or endpoint name has a colon). */
const PART = 'part:';
const DAY_MS = 86_400_000;
/** Every zone's offset is a multiple of 15 minutes, so local hours and days start on this grid of UTC. */
const GRID_MS = 900_000;

/** The most events of a cell kept to check later asks against (rowsOfCell; 80 KB), and how many cells are kept. */
const CELL_MOST = 10_000;
const CELLS_KEPT = 200;
/**
 * The most events in a `24h` question's start cell for its answer to be kept fresh after writes:
 * one per 5 s on average, so a viewer who comes within the default flush interval (5 s) after a
 * refresh finds it still the answer about two times in three (1 − e^−x over x, x = 5 s ÷ 5 s). A
 * refresh a viewer joins costs it the wait for the refresh's statement (README "Answer cache"):
 * with more events, that wait would mostly buy an answer already passed.
 */
const QUIET_START_CELL_MOST = 180;

/**
 * The instants of the project's events in [from, to) (at most `most`; the bounds that move with
 * the clock are those of reports on events, never of bot hits). The date bounds repeat the
 * instants', so the key analysis (key `toDate(ts)`) reads a day, not the month.
 */
const CELL_ROWS_SQL = `
SELECT toUnixTimestamp64Milli(ts) AS at FROM events
WHERE project_id = {projectId:String} AND toDate(ts) >= toDate({from:DateTime64(3, 'UTC')}) AND toDate(ts) <= toDate({to:DateTime64(3, 'UTC')})
  AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}
ORDER BY ts LIMIT {most:UInt32}`;

/** Whether any of `rows` (ascending instants) lies in [a, b). */
function rowsIn(rows: Float64Array, a: number, b: number): boolean {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]! < a) lo = mid + 1;
    else hi = mid;
  }
  return lo < rows.length && rows[lo]! < b;
}

/**
 * Whether an answer to `question` at `now` may be reused later: not with `compare` unless the
 * question can tell its compared range, and not at a whole second (where a bucket start could
 * equal the answer's `to` or a moving start, and restamping would move it too).
 */
function reusable(question: Question, now: number): boolean {
  const { input } = question;
  if (now % 1000 === 0 || typeof input !== 'object' || input === null) return false;
  return (input as { compare?: unknown }).compare === undefined || question.comparedRange !== undefined;
}

/** The start of the 15-minute cell of the clock that holds `instant`. */
const cellOf = (instant: number): number => Math.floor(instant / GRID_MS) * GRID_MS;

/** Whether the question's range starts at an instant that moves with the clock: `24h`, exactly 24 hours before now. */
const startFollowsClock = (question: Question): boolean => (question.input as { period?: unknown }).period === '24h';

/** JSON with object keys sorted, so the same input always gives the same key. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

/** Whether a compared end may be restamped: unmoved, or off whole seconds (where a bucket start or the compared start could print as it). */
const restampable = ([then, now]: readonly [number, number]) => then === now || (then % 1000 !== 0 && now % 1000 !== 0);

/**
 * A copy of `answer` as computed later: the only values that differ are the last instants
 * counted, each `[then, now]` pair's `then` as ISO text (the answer's own `to`, and a compared
 * range's; rows are all older than them, and none is on a whole second like a bucket start, so
 * no other value prints as one).
 */
function restamp(answer: unknown, moves: readonly (readonly [number, number])[]): unknown {
  const to = new Map(moves.map(([then, now]) => [new Date(then).toISOString(), new Date(now).toISOString()]));
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string' && to.has(value)) return to.get(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
  };
  return walk(answer);
}
