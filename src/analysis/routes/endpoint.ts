import type * as v from 'valibot';
import type { Deps } from '../../deps.js';
import type { Project } from '../../projects/store.js';
import { runAsUserQuestion, runThroughAnswerCache } from '../../reports/answer-cache.js';

/** What an analysis handler runs with: the app's deps and the project the caller may read. */
export interface AnalysisContext {
  deps: Deps;
  project: Project;
}

/**
 * One analysis endpoint, as data: its route (GET with a query, or POST with a JSON body), its
 * OpenAPI entry, its CSV form and its MCP tool are all built from this one definition, and the
 * route and the tool call the same `run`.
 */
export interface AnalysisEndpoint<In = unknown, Out = unknown> {
  /** MCP tool name. */
  name: string;
  method: 'GET' | 'POST';
  /** Path below `/api/v1/projects`, e.g. `/:domain/breakdown`. */
  path: string;
  summary: string;
  description: string;
  /** The query (GET, values as text) or the JSON body (POST); failures answer 400 with the schema's message. */
  input: v.GenericSchema<unknown, In>;
  response: v.GenericSchema;
  run(ctx: AnalysisContext, input: In): Promise<Out>;
  /** `false` when an answer may not be reused from the answer cache (realtime: its window moves with the clock). */
  answerCache?: false;
  /** The answer as CSV text (`Accept: text/csv`); the input tells which columns were asked for. */
  csv(answer: Out, input: In): string;
}

/** The endpoint whose `run` goes through the answer cache (src/reports/answer-cache.ts), unless it opts out: then it is only held as a user's question. */
export function withAnswerCache(e: AnalysisEndpoint): AnalysisEndpoint {
  if (e.answerCache === false) return { ...e, run: runAsUserQuestion(e.run) };
  return { ...e, run: runThroughAnswerCache(e.name, e.run) };
}

/** Identity helper that keeps an endpoint's input and answer types tied together. */
export const defineEndpoint = <In, Out>(e: AnalysisEndpoint<In, Out>): AnalysisEndpoint => e as unknown as AnalysisEndpoint;
