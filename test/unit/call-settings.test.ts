import { describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { oneCallSettings } from '../../src/adapters/call-settings.js';

type Sent = { member: string; query?: string; settings?: Record<string, unknown> };

/** A client that records what each call sends, and answers the settings look-up from `session`. */
function recordingClient(session: Record<string, string>) {
  const sent: Sent[] = [];
  const call = (member: string) => async (params: { query?: string; query_params?: { names?: string[] }; clickhouse_settings?: Record<string, unknown> }) => {
    sent.push({ member, query: params.query, settings: params.clickhouse_settings });
    const names = params.query_params?.names ?? [];
    return { json: async () => names.filter((name) => name in session).map((name) => ({ name, value: session[name] })) };
  };
  const client = { query: call('query'), command: call('command'), exec: call('exec'), insert: call('insert'), close: async () => {} } as unknown as ClickHouseClient;
  return { client, sent };
}

const LOOK_UP = /system\.settings/;

describe('oneCallSettings', () => {
  it('sends a call as it came while no call has brought settings', async () => {
    const { client, sent } = recordingClient({});
    await oneCallSettings(client, { priority: '1' }).query({ query: 'SELECT 1' });
    expect(sent).toEqual([{ member: 'query', query: 'SELECT 1', settings: undefined }]);
  });

  it('sets back, on every later call, each setting an earlier call brought: to the connection’s value, else the session’s', async () => {
    const { client, sent } = recordingClient({ mutations_sync: '0', max_threads: '2' });
    const wrapped = oneCallSettings(client, { priority: '1' });
    await wrapped.command({ query: 'ALTER …', clickhouse_settings: { mutations_sync: '2', priority: '2' } });
    // The session's values were looked up once, before the call that first brought them.
    expect(sent.filter((s) => LOOK_UP.test(s.query ?? ''))).toHaveLength(1);
    await wrapped.insert({ table: 't', values: [], clickhouse_settings: { max_threads: 1 } } as never);
    await wrapped.query({ query: 'SELECT 2' });
    const [first, insert, plain] = sent.filter((s) => !LOOK_UP.test(s.query ?? ''));
    expect(first!.settings).toEqual({ mutations_sync: '2', priority: '2' });
    expect(insert!.member).toBe('insert');
    expect(insert!.settings).toEqual({ mutations_sync: '0', priority: '1', max_threads: 1 });
    expect(plain!.settings).toEqual({ mutations_sync: '0', priority: '1', max_threads: '2' });
    // max_threads was looked up with what the connection had been given set back.
    const lookUps = sent.filter((s) => LOOK_UP.test(s.query ?? ''));
    expect(lookUps).toHaveLength(2);
    expect(lookUps[1]!.settings).toEqual({ mutations_sync: '0', priority: '1' });
  });

  it('does not track a setting the engine does not list', async () => {
    const { client, sent } = recordingClient({});
    const wrapped = oneCallSettings(client, {});
    await wrapped.query({ query: 'SELECT 1', clickhouse_settings: { no_such_setting: 1 } });
    await wrapped.query({ query: 'SELECT 2' });
    expect(sent.at(-1)!.settings).toBeUndefined();
  });
});
