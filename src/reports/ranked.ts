import * as v from 'valibot';
import type { CsvColumn } from './definition.js';
import { limitParam, reportQuery, generalPeriod } from './params.js';
import { definePlannedReport } from './planned.js';
import type { SourcedSql } from './planner.js';
import { queryRows, sourceParams, type RowOf, type RowSpec } from './query.js';
import { PeriodEntries, periodFields, resolveFor } from './shape.js';

/**
 * A top-N list report (`period`, `limit`, answer `{period, from, to, data[]}`): the SQL ranks
 * and limits, `toItem` shapes each row, `finish` may add fields that depend on the whole list.
 */
export function defineRankedReport<S extends RowSpec, I extends v.ObjectEntries>(opts: {
  name: string;
  path: string;
  summary: string;
  description?: string;
  /** Default `limit` (max is always 100). */
  defaultLimit?: number;
  sql: SourcedSql;
  spec: S;
  item: I;
  toItem: (row: RowOf<S>) => v.InferOutput<v.ObjectSchema<I, undefined>>;
  finish?: (items: v.InferOutput<v.ObjectSchema<I, undefined>>[]) => v.InferOutput<v.ObjectSchema<I, undefined>>[];
  /** CSV section; `columns` default to the item's fields, headed by their names. */
  csv: { title: string; columns?: CsvColumn<v.InferOutput<v.ObjectSchema<I, undefined>>>[] };
}) {
  type Item = v.InferOutput<v.ObjectSchema<I, undefined>>;
  const response = v.object({ ...PeriodEntries, data: v.array(v.object(opts.item)) });
  return definePlannedReport({
    name: opts.name,
    path: opts.path,
    summary: opts.summary,
    ...(opts.description ? { description: opts.description } : {}),
    query: reportQuery(generalPeriod(), limitParam(100, opts.defaultLimit ?? 10)),
    response,
    async compute(ctx, input, source) {
      const period = resolveFor(ctx, input.period);
      const rows = await queryRows(ctx.deps, opts.sql[source], { ...(await sourceParams(ctx.deps, ctx.project.id, period, source)), limit: input.limit }, opts.spec);
      const items = rows.map(opts.toItem);
      return { ...periodFields(period), data: opts.finish ? opts.finish(items) : items } as v.InferOutput<typeof response>;
    },
    csv: { title: opts.csv.title, columns: opts.csv.columns ?? itemColumns<Item>(Object.keys(opts.item)), rows: (r) => r.data as Item[] },
  });
}

/** One CSV column per item field, headed by the field's name. */
function itemColumns<Item>(fields: string[]): CsvColumn<Item>[] {
  return fields.map((field) => ({ header: field, value: (row) => (row as Record<string, string | number | null>)[field] }));
}
