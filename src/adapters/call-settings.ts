import { withMembers, type ClickHouseClient } from './clickhouse.js';

/** The client calls that may bring ClickHouse settings of their own. */
const CALLS_WITH_SETTINGS = new Set<PropertyKey>(['query', 'command', 'exec', 'insert']);

type Settings = NonNullable<Parameters<ClickHouseClient['query']>[0]['clickhouse_settings']>;
type CallParams = { clickhouse_settings?: Settings } | undefined;
type Call = (params: CallParams) => unknown;

/** Calls `member` (a call that may bring settings) of `client` with `params`. */
export const callMember = (client: ClickHouseClient, member: PropertyKey, params: CallParams): unknown =>
  (client[member as 'query'] as unknown as Call).call(client, params);

/**
 * `client` whose calls that may bring settings of their own (`query`, `command`, `exec`,
 * `insert`) go through `through`; every other member is the client's own.
 */
export function withSettingsCalls(client: ClickHouseClient, through: (member: PropertyKey, params: CallParams) => unknown): ClickHouseClient {
  const routed = new Map([...CALLS_WITH_SETTINGS].map((member) => [member, (params: CallParams) => through(member, params)]));
  return withMembers(client, (member) => routed.get(member));
}

/**
 * `client` (a connection to the embedded engine made with `everyCall` as its client settings)
 * whose calls' own settings apply to those calls alone. The engine applies a call's settings as
 * `SET` statements in its connection's session, where they outlive the call: a purge's
 * `mutations_sync` or a part store's block sizes would otherwise apply to every later call on the
 * connection that does not set them again (README "The engine's fixed cost per statement"). So
 * each setting a call brings is remembered, and every later call sends it back at its baseline
 * unless the call brings it itself: its `everyCall` value, else the session's value before any
 * call brought it (read from `system.settings` just before the first call that does, with every
 * setting known by then set back). Settings the engine does not list are not tracked (it refuses
 * them anyway).
 */
export function oneCallSettings(client: ClickHouseClient, everyCall: Settings): ClickHouseClient {
  /** The baseline of every setting a call has brought on this connection. */
  const baselines = new Map<string, Settings[string]>();
  const resetsExcept = (own: Settings): Settings => {
    const resets: Settings = {};
    for (const [name, value] of baselines) if (!(name in own)) resets[name] = value;
    return resets;
  };
  const learn = async (names: string[]) => {
    const fromEngine = names.filter((name) => !(name in everyCall));
    for (const name of names) if (name in everyCall) baselines.set(name, everyCall[name]);
    if (fromEngine.length === 0) return;
    // Sent with every setting known so far set back, so what an earlier call left cannot change the answer.
    const rs = await client.query({
      query: 'SELECT name, value FROM system.settings WHERE name IN {names:Array(String)}',
      query_params: { names: fromEngine },
      format: 'JSONEachRow',
      clickhouse_settings: resetsExcept({}),
    });
    for (const row of (await rs.json()) as { name: string; value: string }[]) baselines.set(row.name, row.value);
  };
  return withSettingsCalls(client, async (member, params) => {
    const own = params?.clickhouse_settings ?? {};
    const unseen = Object.keys(own).filter((name) => !baselines.has(name));
    if (unseen.length > 0) await learn(unseen);
    const resets = resetsExcept(own);
    return callMember(client, member, Object.keys(resets).length === 0 ? params : { ...params, clickhouse_settings: { ...resets, ...own } });
  });
}
