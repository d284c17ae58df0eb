/**
 * The one way the service writes a log line, so no secret reaches a log: the password of any
 * `scheme://user:password@host` URL (REDIS_URL, CLICKHOUSE_URL, webhook and SMTP-style URLs) and
 * secret-looking query values (`?password=`, `token=`, `secret=`, `key=`…) are replaced by `***`
 * in every line, error message, stack and cause. Leaf module: imports nothing of the app.
 */

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@]*)@/gi;
const SECRET_PARAM = /([?&;](?:password|passwd|pwd|pass|token|secret|api[_-]?key|access[_-]?key|key|auth|authorization)=)[^&#\s'"]*/gi;

/** `redis://user:s3cret@host` → `redis://user:***@host`; a userinfo without `:` is hidden whole. */
export function redactSecrets(text: string): string {
  return text
    .replace(USERINFO, (_all, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : '***'}@`;
    })
    .replace(SECRET_PARAM, '$1***');
}

/** An error as text for a log line: its stack (or message), then its causes, redacted. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof Error) {
      parts.push(current.stack ?? `${current.name}: ${current.message}`);
      current = (current as { cause?: unknown }).cause;
    } else {
      parts.push(typeof current === 'string' ? current : safeJson(current));
      current = undefined;
    }
  }
  return redactSecrets(parts.join('\ncaused by: '));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Writes `line` (and the error, when given) to stderr, redacted. */
export function logError(line: string, err?: unknown): void {
  console.error(err === undefined ? redactSecrets(line) : `${redactSecrets(line)}: ${describeError(err)}`);
}

/** Writes an informational line to stdout, redacted. */
export function logInfo(line: string): void {
  console.log(redactSecrets(line));
}
