import type { DataVersions } from './data-version.js';
import { EncodedRows, type RowStore, type Rows } from './row-store.js';

/** The projects `rows` belong to, or 'all' when they cannot be told without decoding them. */
export function projectsOf(rows: Rows): readonly string[] | 'all' {
  if (rows instanceof EncodedRows) {
    const constant = rows.constants?.project_id;
    if (constant !== undefined) return [constant];
    return rows.projectIds ?? 'all';
  }
  const ids = new Set<string>();
  for (const row of rows) {
    if (typeof row.project_id !== 'string') return 'all';
    ids.add(row.project_id);
  }
  return [...ids];
}

/**
 * A RowStore that moves the data version of the projects written (see DataVersions) once
 * ClickHouse has the rows, so no cached answer outlives a write, then tells `afterMove` (the
 * answer cache, which computes recently asked answers again). A failed insert moves nothing.
 */
export function versionedRowStore(store: RowStore, versions: DataVersions, afterMove?: (projectIds: readonly string[] | 'all') => void): RowStore {
  return {
    async insert(table, rows, opts) {
      await store.insert(table, rows, opts);
      const projects = projectsOf(rows);
      await versions.moved(projects);
      afterMove?.(projects);
    },
    ping: () => store.ping(),
    ...(store.rowBinaryTypes ? { rowBinaryTypes: (table: string) => store.rowBinaryTypes!(table) } : {}),
  };
}
