import type { Clock } from '../adapters/clock.js';

/** How the refresher picks and paces its work. */
export interface RefreshOptions {
  /** A question stays kept fresh this long after it was last asked (ms). */
  watchMs: number;
  /** At most this many questions are watched; the least recently asked go first. */
  maxWatched?: number;
  /**
   * The refresher's own clock: when a question was asked and whether it still is watched, and
   * the clock every refresh is answered at (an asker's clock may be pinned: an export's is).
   */
  clock: Clock;
  /** A round is worked in slices of about this much refresh time, each followed by an equal rest (default 1000 ms). */
  sliceMs?: number;
}

/** Writes in a row must have paused this long before a pass starts: an import's blocks arrive back to back, and are refreshed once after them. */
const SETTLE_MS = 200;

/** A write with none this long before it starts a pass at once: a live site's batches are flushed seconds apart. */
const ALONE_AFTER_MS = 1000;

/** The slice of refresh time after which the refresher rests as long (RefreshOptions.sliceMs). */
const SLICE_MS = 1000;

/** The longest rest, should one question outlast its slice by far. */
const MAX_REST_MS = 5000;

/**
 * Questions of a project asked within this long of the round's next one (a dashboard's requests)
 * are refreshed together: their reads wait together and the embedded engine takes them as one
 * statement (README "Combined reads"), as it did when they were asked.
 */
const ASKED_TOGETHER_MS = 2000;

/**
 * At most this many questions are refreshed together (a statement combines up to 32 reads) after
 * a write alone. After writes in a row (an import, batches back to back) they are refreshed one at
 * a time: a question asked while a group's statement runs waits for all of it, and such a round
 * is the likelier to be overtaken by the next write.
 */
const MOST_TOGETHER = 16;

/** A project's questions still to refresh since its last write (taken when the round starts); a write replaces the round. */
interface Round {
  keys: string[] | undefined;
  /** How many of them are refreshed together: MOST_TOGETHER after a write alone, else one. */
  together: number;
}

interface Watch {
  projectId: string;
  /** When it was last asked, on the refresher's clock. */
  askedAt: number;
  rerun: Rerun;
}

/** Answers a question again through the answer cache (stored under the current data version), at `clock`. */
export type Rerun = (clock: Clock) => Promise<unknown>;

/**
 * Keeps recently asked answers fresh (README "Answer cache → Kept fresh"): after a write moved a
 * project's data version, the questions asked of that project lately are answered again in the
 * background, so the next viewer is served instead of waiting for the computation. Nothing here
 * decides what may be reused — every refresh goes through the answer cache's own rules — it only
 * chooses when to ask. After a write alone (a live site's batch) it starts at once, and questions
 * asked together (a dashboard's) are refreshed together, as one engine statement; after writes in
 * a row (an import's blocks after its first) it waits for them to pause for a moment and
 * refreshes one question at a time. It gives way to users: a question is refreshed only while no
 * user's question is being answered, and after each slice of refresh time it rests as long as the
 * slice took, so refreshing takes at most half the engine's time. Each write starts the project's
 * round again from its most recently asked question, so where refreshing everything
 * outlasts the time between writes, the questions being looked at now are the ones kept fresh.
 */
export class AnswerRefresher {
  private readonly watched = new Map<string, Watch>();
  /** Projects with questions to refresh, in the order their rounds are worked. */
  private readonly rounds = new Map<string, Round>();
  private loop: Promise<void> | undefined;
  private userQuestions = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  /** performance.now() before which no pass starts: the rest after the last one. */
  private restUntil = 0;
  private cutSleep: (() => void) | undefined;
  /** The reruns in progress. */
  private running: Promise<unknown> | undefined;
  /** performance.now() of the last write told. */
  private lastWrite = Number.NEGATIVE_INFINITY;
  /** performance.now() before which no pass starts after the last write: at once for a write alone, SETTLE_MS after writes in a row. */
  private settledAt = 0;
  /** Questions answered again, and refreshes that failed (their question is no longer watched). */
  readonly counts = { refreshed: 0, failed: 0 };

  constructor(private readonly opts: RefreshOptions) {}

  /** How many questions are watched now. */
  get watching(): number {
    return this.watched.size;
  }

  /** Records that `key` (a question of `projectId`) was asked now; `rerun` answers it again. */
  watch(key: string, projectId: string, rerun: Rerun): void {
    if (this.closed || this.opts.watchMs <= 0) return;
    this.watched.delete(key);
    this.watched.set(key, { projectId, askedAt: this.opts.clock.now(), rerun });
    const max = this.opts.maxWatched ?? 1000;
    while (this.watched.size > max) this.watched.delete(this.watched.keys().next().value!);
  }

  /** Answers a user's question with `answer`: no refresh starts while it runs (userQuestion held throughout). */
  async asked<A>(answer: () => Promise<A>): Promise<A> {
    const done = this.userQuestion();
    try {
      return await answer();
    } finally {
      done();
    }
  }

  /** A user's question started being answered; `done` when it is. Refreshing waits for none to be running. */
  userQuestion(): () => void {
    this.userQuestions++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.userQuestions === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
  }

  /** Rows of these projects (or of any project) were written: their watched questions are answered again. */
  written(projectIds: readonly string[] | 'all'): void {
    if (this.closed) return;
    const now = performance.now();
    const alone = now - this.lastWrite > ALONE_AFTER_MS;
    this.settledAt = alone ? now : now + SETTLE_MS;
    this.lastWrite = now;
    const watchedProjects = new Set([...this.watched.values()].map((w) => w.projectId));
    const moved = projectIds === 'all' ? [...watchedProjects] : projectIds.filter((id) => watchedProjects.has(id));
    for (const projectId of moved) this.rounds.set(projectId, { keys: undefined, together: alone ? MOST_TOGETHER : 1 });
    if (moved.length > 0 && !this.loop) {
      this.loop = this.drain().finally(() => {
        this.loop = undefined;
      });
    }
  }

  /** Resolves once the questions being refreshed now, if any, are answered (with `userQuestion` held, nothing starts after them). */
  async current(): Promise<void> {
    await this.running?.catch(() => {});
  }

  /** Resolves once nothing is waiting to be refreshed (for tests; under a steady stream of writes it may never). */
  async settled(): Promise<void> {
    while (this.loop) await this.loop;
  }

  /** Stops refreshing: what is queued is dropped, a running refresh is awaited. */
  async close(): Promise<void> {
    this.closed = true;
    this.rounds.clear();
    this.watched.clear();
    for (const wake of this.idleWaiters.splice(0)) wake();
    this.cutSleep?.();
    await this.settled();
  }

  /** Waits `ms`, or less when the refresher is closed meanwhile. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.cutSleep = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async drain(): Promise<void> {
    while (!this.closed && this.rounds.size > 0) {
      const wait = Math.max(this.restUntil, this.settledAt) - performance.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      const started = performance.now();
      const [projectId, round] = this.rounds.entries().next().value!;
      // Most recently asked first: the likeliest to be asked again soon (taken now, so questions asked since the write count).
      round.keys ??= [...this.watched.entries()].filter(([, w]) => w.projectId === projectId).map(([key]) => key).reverse();
      while (round.keys.length > 0 && this.rounds.get(projectId) === round && performance.now() - started < (this.opts.sliceMs ?? SLICE_MS)) {
        const together = this.askedTogether(round.keys, round.together);
        if (together.length === 0) continue;
        await this.idle();
        if (this.closed) return;
        const running = Promise.allSettled(together.map(([, w]) => w.rerun(this.opts.clock)));
        this.running = running;
        const results = await running;
        this.running = undefined;
        for (const [i, result] of results.entries()) {
          if (result.status === 'fulfilled') {
            this.counts.refreshed++;
            continue;
          }
          this.counts.failed++;
          const [key, w] = together[i]!;
          if (this.watched.get(key) === w) this.watched.delete(key);
        }
      }
      // Done, or cut by a newer write (whose round starts again from the top); otherwise the next project's turn.
      if (this.rounds.get(projectId) === round) {
        this.rounds.delete(projectId);
        if (round.keys.length > 0) this.rounds.set(projectId, round);
      }
      const ended = performance.now();
      this.restUntil = ended + Math.min(ended - started, MAX_REST_MS);
    }
  }

  /**
   * The next questions of a round's `keys` to refresh together, taken off them: the next one still
   * watched, and those after it asked within ASKED_TOGETHER_MS of it (at most `most`).
   * Questions no longer watched, or not asked for longer than the watch, are dropped on the way.
   */
  private askedTogether(keys: string[], most: number): [string, Watch][] {
    const together: [string, Watch][] = [];
    while (keys.length > 0 && together.length < most) {
      const key = keys[0]!;
      const w = this.watched.get(key);
      const stale = w !== undefined && this.opts.clock.now() - w.askedAt > this.opts.watchMs;
      if (!w || stale) {
        if (stale) this.watched.delete(key);
        keys.shift();
        continue;
      }
      if (together.length > 0 && Math.abs(together[0]![1].askedAt - w.askedAt) > ASKED_TOGETHER_MS) break;
      keys.shift();
      together.push([key, w]);
    }
    return together;
  }

  private idle(): Promise<void> {
    if (this.userQuestions === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
