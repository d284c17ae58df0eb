import type * as v from 'valibot';
import type { Deps } from '../deps.js';
import type { Project, Role } from '../projects/store.js';
import { runThroughAnswerCache } from './answer-cache.js';

/** What a report's `run` receives besides its parsed parameters. */
export interface ReportContext {
  deps: Deps;
  project: Project;
  /** Caller's role in the project. */
  role: Role;
}

/** One CSV column: header text and how to read the cell from a row. */
export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => string | number | boolean | null | undefined;
}

/**
 * A report is data: this one definition drives its REST route, its OpenAPI entry, its CSV
 * form (`Accept: text/csv` and the export), and its MCP tool.
 */
export interface ReportDefinition<P extends v.GenericSchema = v.GenericSchema, R extends v.GenericSchema = v.GenericSchema, Row = unknown> {
  /** Stable name: MCP tool `report_{name}`, CSV section id. */
  name: string;
  /** Route path below `/api/v1/projects`, e.g. `/:domain/stats`. */
  path: string;
  summary: string;
  description?: string;
  /** Query parameters (valibot); failures answer 400 with the schema's message. */
  query: v.GenericSchema;
  /** Path parameters beyond `domain`, when the report has any (e.g. `visitorId`). */
  params?: v.GenericSchema;
  response: R;
  /** Roles allowed; defaults to every role. */
  roles?: readonly Role[];
  run(ctx: ReportContext, input: v.InferOutput<P>): Promise<v.InferOutput<R>>;
  /**
   * What the answer depends on beside the events and the project record (goal or funnel
   * definitions, which live in Redis and change without a data version moving), read once per
   * request before the answer cache is asked: its fields join the input, so an answer is reused
   * only for the very same definitions, and `run` computes with the ones it was keyed by.
   */
  dependsOn?: (ctx: ReportContext, input: v.InferOutput<P>) => Promise<Record<string, unknown>>;
  /** CSV form: section title, columns, and the rows of a result. */
  csv?: { title: string; columns: CsvColumn<Row>[]; rows: (result: v.InferOutput<R>) => Row[] };
}

/**
 * The definition whose `run` goes through the answer cache (see answer-cache.ts), with what it
 * `dependsOn` read first and keyed with its input.
 */
export function withAnswerCache(def: ReportDefinition): ReportDefinition {
  const cached = runThroughAnswerCache(def.name, def.run);
  const { dependsOn } = def;
  if (!dependsOn) return { ...def, run: cached };
  return { ...def, run: async (ctx, input) => cached(ctx, { ...(input as object), ...(await dependsOn(ctx, input)) }) };
}

/** Identity helper that keeps a definition's types tied together. */
export function defineReport<P extends v.GenericSchema, R extends v.GenericSchema, Row>(
  def: ReportDefinition<P, R, Row> & { query: P },
): ReportDefinition<P, R, Row> {
  return def;
}
