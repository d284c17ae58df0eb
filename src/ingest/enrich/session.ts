import { createHash } from 'node:crypto';
import type { Redis } from '@upstash/redis';

/** A session ends after this long without an event. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * One round trip, atomic: the key holds `<sessionId>:<lastSeenMs>`. The session continues when
 * the last event is less than the idle time before `now` (event time, so an injected clock
 * works), otherwise the candidate id starts a new one. Either way the key's TTL is reset to
 * the idle time, so an idle session's key also disappears on its own.
 * KEYS[1] key; ARGV[1] candidate id, ARGV[2] now (ms), ARGV[3] idle (ms).
 */
const SESSION_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[2])
local sep = cur and string.find(cur, ':', 1, true)
if sep then
  local id = string.sub(cur, 1, sep - 1)
  local last = string.sub(cur, sep + 1)
  if now - tonumber(last) < tonumber(ARGV[3]) then
    -- Late events do not move the last-seen time backwards.
    if tonumber(last) <= now then last = ARGV[2] end
    redis.call('SET', KEYS[1], id .. ':' .. last, 'PX', ARGV[3])
    return id
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[3])
return ARGV[1]
`;

const SESSION_SCRIPT_SHA = createHash('sha1').update(SESSION_SCRIPT).digest('hex');

const randomUInt64 = (): string => crypto.getRandomValues(new BigUint64Array(1))[0]!.toString();

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
  const keys = [`sess:${projectId}:${visitorId}`];
  const args = [randomUInt64(), String(Math.trunc(now)), String(idleMs)];
  // EVALSHA sends 40 bytes instead of the script; the first call on a fresh Redis loads it.
  const id = await redis.evalsha<string[], string | number>(SESSION_SCRIPT_SHA, keys, args).catch((err: Error) => {
    if (!/noscript/i.test(err.message)) throw err;
    return redis.eval<string[], string | number>(SESSION_SCRIPT, keys, args);
  });
  // Upstash turns digit strings that fit a double back into numbers.
  return String(id);
}
