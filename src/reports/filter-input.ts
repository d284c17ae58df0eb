import * as v from 'valibot';
import { Binder } from '../analysis/binder.js';
import { parseFilters } from '../analysis/filters.js';
import { keptEventsCondition } from '../analysis/plan.js';
import type { Filter } from '../analysis/question.js';
import type { QueryParams } from './query.js';

/**
 * `filters` as a GET query takes it: the text grammar of parseFilters (`page==/blog/*;country!=US`),
 * parsed into Filter[] at validation time; absent or '' gives none. A bad text fails validation
 * with parseFilters' own message, so routes answer `400 { error }` with it.
 */
export const FiltersParam = v.pipe(
  v.optional(v.string('filters must be text'), ''),
  v.description('Conditions that must all hold, `;`-separated: `<dimension>==a|b` (is one of), `!=` (none of), `~=` (contains, ignoring case); in page, entryPage and exitPage `*` matches any characters; `\\` escapes `;` `|` `\\`. Event-level dimensions (page, hostname, event, prop:<key>) keep matching events; the others keep every event of matching visits.'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return parseFilters(dataset.value);
    } catch (error) {
      addIssue({ message: error instanceof Error ? error.message : 'filters: invalid' });
      return NEVER;
    }
  }),
);

/** Spread into a report's query object: `v.object({ period, ...FiltersQuery })`. */
export const FiltersQuery = { filters: FiltersParam };

/** What a report's `run` receives from FiltersQuery. */
export interface FiltersInput {
  filters: Filter[];
}

/**
 * A run input's filters: none when absent, since callers that skip validation (the export's
 * unfiltered sections, tests calling `run` or `compute`) pass only what they had before.
 */
export const filtersOf = (input: { filters?: readonly Filter[] }): readonly Filter[] => input.filters ?? [];

/** Whether a report's query schema takes `filters` (the export asks before passing them on). */
export function takesFilters(query: v.GenericSchema): boolean {
  const entries = (query as { entries?: Record<string, unknown> }).entries;
  return entries !== undefined && 'filters' in entries;
}

/**
 * Binds `filters` on top of a report's `params`: the SQL condition over `events` rows that keeps
 * the filtered events (`'1'` without filters) and the params to send with it.
 */
export function keptEvents(filters: readonly Filter[], params: QueryParams): { kept: string; params: QueryParams } {
  const binder = new Binder(params);
  const kept = keptEventsCondition(filters, binder);
  return { kept, params: binder.params };
}
