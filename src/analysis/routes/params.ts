import * as v from 'valibot';
import { DIMENSION_NAMES, isFilterDimension } from '../dimensions.js';
import { METRICS, type FilterDimension, type Metric } from '../question.js';
import { parseFilters } from '../filters.js';

/** Largest `offset` a page may start at: deeper pages are a sign of a scraper, not a reader. */
export const OFFSET_MAX = 100_000;

export const MESSAGES = {
  dimension: `dimension must be one of: ${DIMENSION_NAMES.join(', ')}`,
  metrics: `metrics must be a comma-separated list of: ${METRICS.join(', ')}`,
  offset: `offset must be an integer from 0 to ${OFFSET_MAX}`,
} as const;

/** `dimension` of a GET route: any filter dimension (prop:<key> included). */
export const dimensionParam = () =>
  v.pipe(
    v.string(MESSAGES.dimension),
    v.description(`What to break down by: ${DIMENSION_NAMES.join(', ')}`),
    v.check(isFilterDimension, MESSAGES.dimension),
    v.transform((d) => d as FilterDimension),
  );

/** `metrics=visitors,pageviews`: known metrics, each once, default `visitors`. */
export const metricsParam = () =>
  v.optional(
    v.pipe(
      v.string(MESSAGES.metrics),
      v.description(`Comma-separated, the first ranks the rows: ${METRICS.join(', ')}`),
      v.transform((text) => text.split(',')),
      v.check((names) => names.every((n) => (METRICS as readonly string[]).includes(n)) && new Set(names).size === names.length, MESSAGES.metrics),
      v.transform((names) => names as Metric[]),
    ),
    'visitors',
  );

/** `offset` as text (query strings), an integer from 0 to OFFSET_MAX, default 0. */
export const offsetParam = () =>
  v.optional(
    v.pipe(v.string(MESSAGES.offset), v.regex(/^[0-9]{1,6}$/, MESSAGES.offset), v.transform(Number), v.number(MESSAGES.offset), v.minValue(0, MESSAGES.offset), v.maxValue(OFFSET_MAX, MESSAGES.offset)),
    '0',
  );

/** `filters=` text (src/analysis/filters.ts grammar); a bad text fails with the parser's message. */
export const filtersParam = () =>
  v.optional(
    v.pipe(
      v.string('filters must be text'),
      v.description('Conditions separated by ;, each <dimension>==a|b, <dimension>!=a|b or <dimension>~=text'),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        try {
          return parseFilters(dataset.value);
        } catch (err) {
          addIssue({ message: (err as Error).message });
          return NEVER;
        }
      }),
    ),
    '',
  );
