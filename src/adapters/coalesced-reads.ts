import { isPlainJsonSelect, withQuery, type ClickHouseClient } from './clickhouse.js';

type QueryParams = Parameters<ClickHouseClient['query']>[0];
type Answer = Awaited<ReturnType<ClickHouseClient['query']>>;
type Row = Record<string, unknown>;

/**
 * Bounds of one combined statement, far inside the engine's own (`max_query_size` 256 KiB,
 * `max_ast_elements` 50,000): a dashboard sends ~23 reads of 0.5–3 KB each.
 */
const MAX_READS = 32;
const MAX_SQL_CHARS = 200_000;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):/g;
// Clauses that would end or reshape a statement if it were written inside parentheses.
const STATEMENT_CLAUSES = /\b(SETTINGS|FORMAT|INTO\s+OUTFILE)\b/i;

interface Waiting {
  params: QueryParams;
  /** sameReadKey of `params`, once asked. */
  key?: string;
  /** Set for a background client's read (inBackground). */
  lane?: Lane;
  resolve(answer: Answer): void;
  reject(error: unknown): void;
}

/** The reads of one background client: they wait while a user's read does, until promoted. */
interface Lane {
  promoted: boolean;
}

/** A coalescing client's way to make a client of its queue whose reads go in a lane. */
const laneClients = new WeakMap<ClickHouseClient, (lane: Lane) => ClickHouseClient>();
/** The lane of each background client, and the coalescing client it was made from. */
const lanes = new WeakMap<ClickHouseClient, { lane: Lane; foreground: ClickHouseClient }>();

/**
 * A client whose reads wait behind every user's read waiting in `client`'s queue (those of
 * `client` itself, or of a promoted background client): work nobody waits for yet (the answer
 * cache's refresh, README "Answer cache") then never holds a user's statement back but for the
 * one already running. Each call makes a new lane (given a background client, in the queue it was
 * made from); `client` itself when it does not coalesce reads.
 */
export function inBackground(client: ClickHouseClient): ClickHouseClient {
  const foreground = lanes.get(client)?.foreground ?? client;
  const make = laneClients.get(foreground);
  if (!make) return client;
  const lane: Lane = { promoted: false };
  const background = make(lane);
  lanes.set(background, { lane, foreground });
  return background;
}

/** Moves a background client's reads, those waiting and those to come, among users' reads: a user now waits for them. */
export function promote(client: ClickHouseClient): void {
  const found = lanes.get(client);
  if (found) found.lane.promoted = true;
}

/** Whether `client`'s reads wait behind users' (a background client not promoted). */
export const isBackground = (client: ClickHouseClient): boolean => lanes.get(client)?.lane.promoted === false;

/** The client a background client was made from (its reads go as a user's); any other client itself. */
export const foregroundOf = (client: ClickHouseClient): ClickHouseClient => lanes.get(client)?.foreground ?? client;

/** Whether a waiting read is a user's: not in a lane, or in a promoted one. */
const isUsers = (read: Waiting): boolean => read.lane === undefined || read.lane.promoted;

/**
 * Whether a read can become a branch of a combined statement: a SELECT answered as JSONEachRow,
 * with no settings, id or signal of its own, every `{name:` in its text naming one of its
 * parameters. Renaming rewrites every `{name:` of a parameter, so a string literal holding one
 * would change too: our SQL binds values instead of writing such literals.
 */
export function combinable(params: QueryParams): boolean {
  if (!isPlainJsonSelect(params) || STATEMENT_CLAUSES.test(params.query)) return false;
  const { query } = params;
  const bound = params.query_params ?? {};
  return namesIn(query).every((name) => Object.hasOwn(bound, name));
}

/** The parameter names `{name:Type}` placeholders of `sql` use, each once, sorted. */
const namesIn = (sql: string): string[] => [...new Set(Array.from(sql.matchAll(PLACEHOLDER), ([, name]) => name!))].sort();

/**
 * One statement answering several reads: read i becomes a UNION ALL branch whose parameters
 * are renamed `r{i}_{name}`, and whose rows come back as one array of JSONEachRow texts.
 * `groupArray` over a subquery with ORDER BY keeps that order (ClickHouse marks it order-dependent,
 * so the sort is never dropped as redundant; `test/integration/coalesced-reads.test.ts` checks
 * 100,000 ordered rows).
 */
function combinedStatement(reads: readonly QueryParams[]): { query: string; query_params: Record<string, unknown> } {
  const query_params: Record<string, unknown> = {};
  const branches = reads.map((read, i) => {
    for (const [name, value] of Object.entries(read.query_params ?? {})) query_params[`r${i}_${name}`] = value;
    const sql = read.query.replace(PLACEHOLDER, (_, name: string) => `{r${i}_${name}:`);
    // The newline ends a trailing `--` comment of the read before the closing parenthesis.
    return `SELECT ${i} AS read, groupArray(formatRowNoNewline('JSONEachRow', *)) AS rows FROM (${sql}\n)`;
  });
  return { query: branches.join('\nUNION ALL\n'), query_params };
}

/** The rows of each read, as JSONEachRow texts, from the combined statement's answer. */
function splitCombined(answer: readonly { read: number; rows: string[] }[], reads: number): string[][] {
  const texts: string[][] = Array.from({ length: reads }, () => []);
  for (const { read, rows } of answer) texts[read] = rows;
  return texts;
}

/** An answer holding rows already read (each caller parses its own copy): what a caller of `query(…).json()` needs. */
const answerOf = (texts: readonly string[]): Answer =>
  ({
    query_id: '',
    response_headers: {},
    json: async () => texts.map((text) => JSON.parse(text) as Row),
    text: async () => texts.map((text) => `${text}\n`).join(''),
    close() {},
  }) as unknown as Answer;

/**
 * Reads with the same text and the same values for the parameters it names have the same answer
 * when they wait together (reports bind their whole period, and the text of a rollup read names
 * only its day bounds).
 */
export function sameReadKey(read: QueryParams): string {
  const bound = read.query_params ?? {};
  return JSON.stringify([read.query, namesIn(read.query).map((name) => bound[name])]);
}

/**
 * The embedded engine runs one bound statement at a time (README "Where the computed time
 * goes"), so reads waiting together lose nothing by being sent as one, and gain: the engine
 * runs a statement's branches side by side on every core and pays its fixed cost per statement
 * once (a whole dashboard's 23 reads at 1M events: 233 ms one after another, 175 ms as one).
 * This client sends each read that can be combined (`combinable`) with the others that arrived
 * while the previous statement ran, identical reads among them once; a read alone is sent as it
 * is, and every other call goes straight to `client`. When a combined statement fails, its reads
 * are sent one by one, so each caller gets its own answer or its own error. Reads of a
 * background client made from it (`inBackground`) go only into statements no user's read waits for.
 * With `statementsAtOnce` 2 (a client that runs a second read beside the first: readsBeside),
 * users' reads that arrive while a statement runs go at once as a second one; a background read
 * never takes that second place. With `evenShare` n as well, a statement of users' reads takes at
 * most an even share of the distinct ones waiting (half of them with two places), but at least n,
 * each with every waiting read identical to it: a statement holding every read waiting left the
 * other place idle once the statement beside it ended, where the rest of them can start there instead.
 */
export function coalescedReads(client: ClickHouseClient, opts: { statementsAtOnce?: 1 | 2; evenShare?: number } = {}): ClickHouseClient {
  const statementsAtOnce = opts.statementsAtOnce ?? 1;
  const waiting: Waiting[] = [];
  let running = 0;
  let scheduled = false;
  let uncomparable = 0;

  /** A waiting read's sameReadKey, computed once; a key of its own when its values have no JSON (a BigInt). */
  const keyOf = (read: Waiting): string => {
    if (read.key === undefined) {
      try {
        read.key = sameReadKey(read.params);
      } catch {
        read.key = `uncomparable ${++uncomparable}`;
      }
    }
    return read.key;
  };

  /** How many distinct reads of `eligible` the next statement may take (see evenShare); undefined when it may take them all. */
  const distinctLimit = (eligible: Waiting[]): number | undefined => {
    if (opts.evenShare === undefined || eligible.length <= opts.evenShare) return undefined;
    const distinct = new Set(eligible.map(keyOf)).size;
    const limit = Math.max(opts.evenShare, Math.ceil(distinct / statementsAtOnce));
    return limit < distinct ? limit : undefined;
  };

  /**
   * The reads of the next statement, in the order they came: users' first, background reads only
   * when no user's waits (and nothing runs); of users' reads at most distinctLimit distinct ones,
   * each with every waiting read identical to it.
   */
  const next = (): Waiting[] => {
    const usersWaiting = waiting.some(isUsers);
    if (!usersWaiting && running > 0) return [];
    const eligible = usersWaiting ? waiting.filter(isUsers) : [...waiting];
    // Background reads never take the second place, so sharing them would only make more statements.
    const limit = usersWaiting ? distinctLimit(eligible) : undefined;
    // Keys are needed only to count distinct reads against a limit (a read alone never needs one).
    const keys = new Set<string>();
    const taken: Waiting[] = [];
    let chars = 0;
    for (const read of eligible) {
      if (taken.length >= MAX_READS) break;
      if (limit !== undefined && keys.size >= limit && !keys.has(keyOf(read))) continue;
      chars += read.params.query.length;
      if (taken.length > 0 && chars > MAX_SQL_CHARS) break;
      if (limit !== undefined) keys.add(keyOf(read));
      taken.push(read);
    }
    const sent = new Set(taken);
    for (let i = waiting.length - 1; i >= 0; i--) if (sent.has(waiting[i]!)) waiting.splice(i, 1);
    return taken;
  };

  const alone = async (read: Waiting) => {
    try {
      read.resolve(await client.query(read.params));
    } catch (error) {
      read.reject(error);
    }
  };

  const together = async (reads: Waiting[]) => {
    let branchOf: number[];
    let texts: string[][];
    try {
      // Each distinct read is one branch (a computed dashboard's devices, browsers and OS ask the same tech read).
      const branches = new Map<string, { params: QueryParams; index: number }>();
      branchOf = reads.map((read) => {
        const key = keyOf(read);
        let branch = branches.get(key);
        if (!branch) branches.set(key, (branch = { params: read.params, index: branches.size }));
        return branch.index;
      });
      const answer = await client.query({ ...combinedStatement([...branches.values()].map((b) => b.params)), format: 'JSONEachRow' });
      texts = splitCombined(await answer.json(), branches.size);
    } catch {
      await Promise.all(reads.map(alone));
      return;
    }
    reads.forEach((read, i) => read.resolve(answerOf(texts[branchOf[i]!]!)));
  };

  /** Sends statements of the reads waiting while fewer than statementsAtOnce run. */
  const send = () => {
    scheduled = false;
    while (running < statementsAtOnce && waiting.length) {
      const reads = next();
      if (reads.length === 0) return;
      running++;
      void (reads.length === 1 ? alone(reads[0]!) : together(reads)).finally(() => {
        running--;
        send();
      });
    }
  };

  const queryIn = (lane: Lane | undefined) => (params: QueryParams): Promise<Answer> => {
    if (!combinable(params)) return client.query(params);
    return new Promise<Answer>((resolve, reject) => {
      waiting.push({ params, ...(lane ? { lane } : {}), resolve, reject });
      if (scheduled || running >= statementsAtOnce) return;
      scheduled = true;
      // Reads started in the same turn of the event loop go out together.
      setImmediate(send);
    });
  };

  const coalescing = withQuery(client, queryIn(undefined));
  laneClients.set(coalescing, (lane) => withQuery(client, queryIn(lane)));
  return coalescing;
}
