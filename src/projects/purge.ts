import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { ANALYTICS_TABLES } from '../analytics-tables.js';

/** Deletes every analytics row of a project from every table, rollups included. */
export async function purgeProjectData(ch: ClickHouseClient, projectId: string): Promise<void> {
  for (const table of ANALYTICS_TABLES) {
    // Table names come from the closed list above; the project id is a bound parameter.
    const statement = 'ALTER TABLE ' + table.name + ' DELETE WHERE project_id = {projectId:String}';
    await ch.command({
      query: statement,
      query_params: { projectId },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
}

/** Deletes every analytics row of several projects at once: one mutation per table, whatever their number. */
export async function purgeProjectsData(ch: ClickHouseClient, projectIds: readonly string[]): Promise<void> {
  if (projectIds.length === 0) return;
  for (const table of ANALYTICS_TABLES) {
    const statement = 'ALTER TABLE ' + table.name + ' DELETE WHERE project_id IN {projectIds:Array(String)}';
    await ch.command({
      query: statement,
      query_params: { projectIds: [...projectIds] },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
}
