import { createHash } from 'node:crypto';
import type { Redis } from '@upstash/redis';

/** A session ends after this long without an event. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * Lua `session(key, candidate, nowText, idle)`, atomic: the key holds `<sessionId>:<lastSeenMs>`.
 * The session continues when the last event is less than the idle time before `now` (event time,
 * so an injected clock works), otherwise the candidate id starts a new one. Either way the key's
 * TTL is reset to the idle time, so an idle session's key also disappears on its own. Shared with
 * the ingest throttle's script, which runs it in the same round trip as the rate counters.
 */
export const SESSION_LUA = `
local function session(key, candidate, nowText, idle)
  local cur = redis.call('GET', key)
  local now = tonumber(nowText)
  local sep = cur and string.find(cur, ':', 1, true)
  if sep then
    local id = string.sub(cur, 1, sep - 1)
    local last = string.sub(cur, sep + 1)
    if now - tonumber(last) < tonumber(idle) then
      -- Late events do not move the last-seen time backwards.
      if tonumber(last) <= now then last = nowText end
      redis.call('SET', key, id .. ':' .. last, 'PX', idle)
      return id
    end
  end
  redis.call('SET', key, candidate .. ':' .. nowText, 'PX', idle)
  return candidate
end
`;

/** KEYS[1] key; ARGV[1] candidate id, ARGV[2] now (ms), ARGV[3] idle (ms). */
const SESSION_SCRIPT = `${SESSION_LUA}return session(KEYS[1], ARGV[1], ARGV[2], ARGV[3])`;

const SESSION_SCRIPT_SHA = createHash('sha1').update(SESSION_SCRIPT).digest('hex');

// getRandomValues per call costs ~3% of the event path; fill a pool of ids at once instead.
const POOL_SIZE = 256;
const pool = new BigUint64Array(POOL_SIZE);
let poolNext = POOL_SIZE;
const randomUInt64 = (): string => {
  if (poolNext === POOL_SIZE) {
    crypto.getRandomValues(pool);
    poolNext = 0;
  }
  return pool[poolNext++]!.toString();
};

/** The Redis key and script arguments of a session lookup (see SESSION_LUA). */
export interface SessionCall {
  key: string;
  /** Candidate id (a fresh random UInt64), now (ms), idle (ms): all decimal strings. */
  args: [string, string, string];
}

/** Builds the session lookup of a visitor's event at `now`, with a fresh candidate id. */
export function sessionCall(projectId: string, visitorId: string, now: number, idleMs: number = SESSION_IDLE_MS): SessionCall {
  return { key: `sess:${projectId}:${visitorId}`, args: [randomUInt64(), String(Math.trunc(now)), String(idleMs)] };
}

/**
 * The session id (random UInt64, decimal string) of a visitor's event at `now`: the current
 * session while the visitor was seen less than 30 min earlier, else a new one.
 */
export async function sessionId(
  redis: Redis,
  projectId: string,
  visitorId: string,
  now: number,
  idleMs: number = SESSION_IDLE_MS,
): Promise<string> {
  const { key, args } = sessionCall(projectId, visitorId, now, idleMs);
  const keys = [key];
  // EVALSHA sends 40 bytes instead of the script; the first call on a fresh Redis loads it.
  const id = await redis.evalsha<string[], string | number>(SESSION_SCRIPT_SHA, keys, args).catch((err: Error) => {
    if (!/noscript/i.test(err.message)) throw err;
    return redis.eval<string[], string | number>(SESSION_SCRIPT, keys, args);
  });
  // Upstash turns digit strings that fit a double back into numbers.
  return String(id);
}
