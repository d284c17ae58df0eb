import { createHash } from 'node:crypto';
import type { Redis } from '@upstash/redis';
import { hashToUInt64 } from './visitor.js';

/** A session ends after this long without an event. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * Lua `session(key, candidate, nowText, idle)`, atomic: the key holds
 * `<sessionId>:<lastSeenMs>:<firstSeenMs>` (first 0 when unknown: a key written before it was
 * kept). The session continues when the last event is less than the idle time before `now` (event
 * time, so an injected clock works) and `now` is less than the idle time before its first event;
 * otherwise the candidate id starts a new one. So no event of a session is an idle time or more
 * older than its first recorded event: each event stores that bound (session_floor), which lets a
 * read find a session's events without scanning the whole period. Answers `<id>:<firstSeenMs>`.
 * The key's TTL is reset to the idle time, so an idle session's key also disappears on its own.
 * Shared with the ingest throttle's script, which runs it in the same round trip as the rate
 * counters.
 */
export const SESSION_LUA = `
local function session(key, candidate, nowText, idle)
  local cur = redis.call('GET', key)
  local now = tonumber(nowText)
  local idleMs = tonumber(idle)
  local id, last, first
  if cur then id, last, first = string.match(cur, '^(%d+):(%d+):?(%d*)$') end
  if id then
    if first == '' then first = '0' end
    local firstMs = tonumber(first)
    if now - tonumber(last) < idleMs and (firstMs == 0 or firstMs - now < idleMs) then
      -- Late events do not move the last-seen time backwards.
      if tonumber(last) <= now then last = nowText end
      redis.call('SET', key, id .. ':' .. last .. ':' .. first, 'PX', idle)
      return id .. ':' .. first
    end
    if now < tonumber(last) then
      -- Long before the visitor's current session: a visit of its own, leaving the current one alone.
      return candidate .. ':' .. nowText
    end
  end
  redis.call('SET', key, candidate .. ':' .. nowText .. ':' .. nowText, 'PX', idle)
  return candidate .. ':' .. nowText
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

/** A visit as ingestion knows it: its id (decimal UInt64) and the time no event of it is older than (epoch ms, 0 when unknown). */
export interface Session {
  id: string;
  floorMs: number;
}

/** Reads SESSION_LUA's answer `<id>:<firstSeenMs>` (Upstash may hand back a number for a bare id: an old script's answer). */
export function parseSession(answer: string | number, idleMs: number = SESSION_IDLE_MS): Session {
  const [id, first] = String(answer).split(':');
  const firstMs = Number(first);
  return { id: id!, floorMs: firstMs > 0 ? firstMs - idleMs : 0 };
}

/**
 * The Redis-down session of a visitor's event at `now`: its 30-minute slot's, so every event of
 * it lies within the slot.
 */
export function slotSession(visitorId: string, now: number): Session {
  const slot = Math.floor(now / SESSION_IDLE_MS);
  return { id: hashToUInt64(`${visitorId}:${slot}`), floorMs: slot * SESSION_IDLE_MS };
}

/**
 * The session of a visitor's event at `now`: the current one while the visitor was seen less
 * than 30 min earlier (and its first event is less than 30 min after `now`), else a new one
 * (random UInt64).
 */
export async function sessionId(
  redis: Redis,
  projectId: string,
  visitorId: string,
  now: number,
  idleMs: number = SESSION_IDLE_MS,
): Promise<Session> {
  const { key, args } = sessionCall(projectId, visitorId, now, idleMs);
  const keys = [key];
  // EVALSHA sends 40 bytes instead of the script; the first call on a fresh Redis loads it.
  const answer = await redis.evalsha<string[], string | number>(SESSION_SCRIPT_SHA, keys, args).catch((err: Error) => {
    if (!/noscript/i.test(err.message)) throw err;
    return redis.eval<string[], string | number>(SESSION_SCRIPT, keys, args);
  });
  return parseSession(answer, idleMs);
}
