import type { ClickHouseClient } from '../adapters/clickhouse.js';

/** True when any event of the project has reached ClickHouse. */
export async function hasAnyEvent(ch: ClickHouseClient, projectId: string): Promise<boolean> {
  const rs = await ch.query({
    query: 'SELECT 1 AS found FROM events WHERE project_id = {projectId:String} LIMIT 1',
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  return (await rs.json()).length > 0;
}
