/**
 * Why a ClickHouse insert failed, as far as the write path needs to know:
 * - `data`: the engine refused the rows themselves (a value it cannot parse or store). The same
 *   rows fail every time; retrying them only holds back the rows behind them.
 * - `transient`: the engine could not take the insert now (no connection, a timeout, memory
 *   limit, too many parts, a proxy's 5xx). The same rows succeed later.
 * - `unknown`: anything else (a schema error, a code not listed here). The caller decides.
 *
 * Errors arrive in three shapes, each checked against the real clients (test/integration/insert-errors.test.ts):
 * the embedded engine's `ChdbInsertError` (`clickhouseCode` number, `code: 'CHDB_INSERT'`), the
 * HTTP clients' `ClickHouseError` (`code` is the exception code as a string, `type` its name),
 * and network errors with a Node/undici `code` (`ECONNREFUSED`, …) or only a message
 * (`socket hang up`, `Timeout error.`, a proxy's bare `Service Unavailable` body).
 */
export type InsertErrorKind = 'data' | 'transient' | 'unknown';

/** Exception codes the engine raises while reading or converting the rows of an insert. */
const DATA_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  25, // CANNOT_PARSE_ESCAPE_SEQUENCE (a lone surrogate escape)
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  32, // ATTEMPT_TO_READ_AFTER_EOF
  33, // CANNOT_READ_ALL_DATA
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  53, // TYPE_MISMATCH
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  130, // CANNOT_READ_ARRAY_FROM_TEXT
  131, // TOO_LARGE_STRING_SIZE
  190, // SIZES_OF_ARRAYS_DONT_MATCH
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  349, // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
  691, // UNKNOWN_ELEMENT_OF_ENUM
]);

/** Exception codes of a server that is overloaded, shutting down or cut off: the same insert succeeds later. */
const TRANSIENT_CODES = new Set([
  159, // TIMEOUT_EXCEEDED
  173, // CANNOT_ALLOCATE_MEMORY
  198, // DNS_ERROR
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  203, // NO_FREE_CONNECTION
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  236, // ABORTED
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY
  243, // NOT_ENOUGH_SPACE
  252, // TOO_MANY_PARTS
  279, // ALL_CONNECTION_TRIES_FAILED
  285, // TOO_FEW_LIVE_REPLICAS
  319, // UNKNOWN_STATUS_OF_INSERT
  394, // QUERY_WAS_CANCELLED
  425, // SYSTEM_ERROR
  999, // KEEPER_EXCEPTION
  1000, // POCO_EXCEPTION (the server's own network layer)
]);

/** Socket-level error codes (Node's net/http and undici's fetch). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN',
  'ENOTFOUND', 'EAI_AGAIN', 'ESOCKETTIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

/**
 * Messages of failures below ClickHouse: the HTTP client's timeout, a dropped socket, fetch on
 * Workers, and the bodies proxies answer a 5xx with (the client gives those as the message,
 * without a code).
 */
const NETWORK_MESSAGE =
  /socket hang up|^timeout error|timed? ?out|fetch failed|network connection lost|network error|connection (refused|reset|closed|lost)|ECONNREFUSED|ECONNRESET|ETIMEDOUT|^(service unavailable|bad gateway|gateway time-?out|internal server error)\b|^\s*<(!doctype|html)/i;

/** The ClickHouse exception code of `err`, when it carries one. */
export function clickhouseErrorCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { clickhouseCode?: unknown; code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.clickhouseCode === 'number') return e.clickhouseCode;
  if (typeof e.code === 'string' && /^\d+$/.test(e.code)) return Number(e.code);
  if (typeof e.code === 'number') return e.code;
  const inMessage = typeof e.message === 'string' ? /^Code: (\d+)\./.exec(e.message) : null;
  if (inMessage) return Number(inMessage[1]);
  return e.cause !== undefined && e.cause !== err ? clickhouseErrorCode(e.cause) : undefined;
}

export function classifyInsertError(err: unknown): InsertErrorKind {
  const code = clickhouseErrorCode(err);
  if (code !== undefined) {
    if (DATA_CODES.has(code)) return 'data';
    if (TRANSIENT_CODES.has(code)) return 'transient';
    return 'unknown';
  }
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return 'transient';
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'transient';
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (NETWORK_MESSAGE.test(message)) return 'transient';
  if (e.cause !== undefined && e.cause !== err) return classifyInsertError(e.cause);
  return 'unknown';
}

/**
 * The row (1-based, within the insert's body) a data error names: the engines say `(at row N)`
 * for rows they cannot parse, the first such row of the body even when parsing in parallel
 * (checked on both clients in test/integration/insert-errors.test.ts). Undefined when the error
 * names none (e.g. a failure inside a materialized view).
 */
export function refusedRowOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { failedAtRow?: unknown; message?: unknown };
  if (typeof e.failedAtRow === 'number' && Number.isInteger(e.failedAtRow) && e.failedAtRow > 0) return e.failedAtRow;
  const match = typeof e.message === 'string' ? /\(at row (\d+)\)/.exec(e.message) : null;
  return match ? Number(match[1]) : undefined;
}

/** The error as one line for logs and the quarantine (the engine's text can span lines). */
export function insertErrorText(err: unknown, max = 500): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
