/**
 * Filters of a question: the `filters=` text grammar of GET routes, the `[op, dimension, values]`
 * tuples of `POST query`, and the SQL condition one filter becomes.
 *
 * Text grammar: conditions separated by `;`, all of which must hold. A condition is
 * `<dimension>==v1|v2` (is one of), `<dimension>!=v1|v2` (is none of) or `<dimension>~=t1|t2`
 * (contains any, ignoring case). A backslash makes the next `;`, `|`, `\`, `=`, `!` or `~`
 * literal (`a\|b` is the one value `a|b`; `=`, `!` and `~` only ever need it in a `prop:` key);
 * before any other character, or at the end, it is an error. Empty conditions (`a==b;`) are
 * skipped. `x==` is the one value `''`: is / is_not may match empty values, contains may not.
 */
import * as v from 'valibot';
import { ApiError } from '../errors.js';
import type { Binder } from './binder.js';
import { DIMENSION_NAMES, PROP_KEY_MAX, isFilterDimension } from './dimensions.js';
import { FILTER_OPS, type Filter, type FilterDimension, type FilterOp } from './question.js';

/** Most conditions one question may have. */
export const FILTERS_MAX = 20;
/** Most values one condition may list. */
export const FILTER_VALUES_MAX = 100;
/** Longest value, in UTF-16 code units (what valibot's maxLength counts too). */
export const FILTER_VALUE_MAX_LENGTH = 2000;

/** Dimensions whose is / is_not values treat `*` as "any characters". */
const WILDCARD_DIMENSIONS: ReadonlySet<string> = new Set(['page', 'entryPage', 'exitPage']);

/** A bad `filters` text or tuple: a 400 whose message says what is wrong (the app's error handler answers `{ error }`). */
export class FilterError extends ApiError {
  override name = 'FilterError';
  constructor(message: string) {
    super(400, message);
  }
}

const SYMBOLS: Readonly<Record<FilterOp, string>> = { is: '==', is_not: '!=', contains: '~=' };
const OPERATORS: ReadonlyMap<string, FilterOp> = new Map(FILTER_OPS.map((op) => [SYMBOLS[op], op]));
const ESCAPABLE = new Set(['\\', ';', '|', '=', '!', '~']);

/** Quotes user text for a message, cut short so a huge condition cannot make a huge answer. */
const quote = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

const Message = {
  tooMany: `filters: at most ${FILTERS_MAX} conditions`,
  badEscape: 'filters: \\ must be followed by ; | \\ = ! or ~',
  noOperator: (condition: string) => `filters: ${quote(condition)} must be <dimension>==value, <dimension>!=value or <dimension>~=text`,
  unknownDimension: (name: string) =>
    name.startsWith('prop:')
      ? `filters: ${quote(name)}: a property dimension is prop:<key> with a key of 1 to ${PROP_KEY_MAX} characters`
      : `filters: unknown dimension ${quote(name)}; allowed: ${DIMENSION_NAMES.join(', ')}`,
  noValues: (name: string) => `filters: ${quote(name)} needs at least one value`,
  tooManyValues: (name: string) => `filters: at most ${FILTER_VALUES_MAX} values in one condition (${quote(name)})`,
  tooLong: (name: string) => `filters: a value may have at most ${FILTER_VALUE_MAX_LENGTH} characters (${quote(name)})`,
  emptyContains: (name: string) => `filters: contains (~=) needs non-empty text in every alternative (${quote(name)})`,
};

/** What is wrong with a condition's values, or null: shared by the text grammar and the tuple schema. */
function valuesProblem(op: FilterOp, dimension: string, values: readonly string[]): string | null {
  if (values.length === 0) return Message.noValues(dimension);
  if (values.length > FILTER_VALUES_MAX) return Message.tooManyValues(dimension);
  if (values.some((x) => x.length > FILTER_VALUE_MAX_LENGTH)) return Message.tooLong(dimension);
  if (op === 'contains' && values.includes('')) return Message.emptyContains(dimension);
  return null;
}

/**
 * Parses the `filters=` text (grammar above) into filters; '' gives none. Throws FilterError with
 * a message for the user on any bad input: unknown dimension, missing operator, bad escape,
 * empty contains text, or more than the limits allow.
 */
export function parseFilters(text: string): Filter[] {
  const filters: Filter[] = [];
  let raw = '';
  let dimension = '';
  let op: FilterOp | null = null;
  let values: string[] = [];
  let value = '';

  const addValue = () => {
    if (value.length > FILTER_VALUE_MAX_LENGTH) throw new FilterError(Message.tooLong(dimension));
    values.push(value);
    if (values.length > FILTER_VALUES_MAX) throw new FilterError(Message.tooManyValues(dimension));
    value = '';
  };
  const endCondition = () => {
    if (op === null) {
      if (raw !== '') throw new FilterError(Message.noOperator(raw));
    } else {
      addValue();
      if (!isFilterDimension(dimension)) throw new FilterError(Message.unknownDimension(dimension));
      const problem = valuesProblem(op, dimension, values);
      if (problem) throw new FilterError(problem);
      if (filters.length === FILTERS_MAX) throw new FilterError(Message.tooMany);
      filters.push({ op, dimension, values });
    }
    raw = dimension = value = '';
    op = null;
    values = [];
  };

  for (let i = 0; i < text.length; i++) {
    let ch = text[i]!;
    if (ch === ';') {
      endCondition();
      continue;
    }
    if (ch === '\\') {
      const next = text[i + 1];
      if (next === undefined || !ESCAPABLE.has(next)) throw new FilterError(Message.badEscape);
      raw += ch + next;
      i++;
      ch = next;
    } else {
      raw += ch;
      if (op === null) {
        const operator = OPERATORS.get(text.slice(i, i + 2));
        if (operator) {
          raw += text[i + 1];
          i++;
          op = operator;
          continue;
        }
      } else if (ch === '|') {
        addValue();
        continue;
      }
    }
    if (op === null) dimension += ch;
    else value += ch;
  }
  endCondition();
  return filters;
}

const escapeText = (s: string, special: RegExp) => s.replace(special, '\\$&');

/** The `filters=` text of `filters`: parseFilters(filtersToText(f)) gives back f. */
export function filtersToText(filters: readonly Filter[]): string {
  return filters
    .map((f) => `${escapeText(f.dimension, /[\\;|=!~]/g)}${SYMBOLS[f.op]}${f.values.map((x) => escapeText(x, /[\\;|]/g)).join('|')}`)
    .join(';');
}

/** A `*` wildcard value as a LIKE pattern: LIKE's own `%`, `_` and `\` are escaped first, so only `*` is special. */
export const likePattern = (wildcard: string) => wildcard.replace(/[\\%_]/g, '\\$&').replaceAll('*', '%');

/**
 * The SQL condition of `f` over the SQL expression `target` (from code, e.g. `path` or
 * `v_source`). Every value is bound through `binder`. is → `target IN [...]`, is_not → its
 * negation, contains → any value occurs ignoring case (UTF-8). In page, entryPage and exitPage
 * an is / is_not value with `*` is a pattern instead, matched with LIKE.
 */
export function filterCondition(f: Filter, target: string, binder: Binder): string {
  if (f.op === 'contains') return `multiSearchAnyCaseInsensitiveUTF8(${target}, ${binder.bind(f.values, 'Array(String)')})`;
  const wildcard = (x: string) => WILDCARD_DIMENSIONS.has(f.dimension) && x.includes('*');
  const exact = f.values.filter((x) => !wildcard(x));
  const parts = exact.length ? [`${target} IN ${binder.bind(exact, 'Array(String)')}`] : [];
  for (const pattern of f.values.filter(wildcard)) parts.push(`${target} LIKE ${binder.bind(likePattern(pattern), 'String')}`);
  if (f.op === 'is_not') return `NOT (${parts.join(' OR ')})`;
  return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
}

/**
 * Whether `f` holds for the empty value: is / is_not with `''` or a pattern of `*` alone in
 * it (contains never does, its text is never empty); an is_not holds for '' when its is would not.
 */
export function holdsForEmpty(f: Filter): boolean {
  const listsEmpty = f.op !== 'contains' && f.values.some((x) => x === '' || (WILDCARD_DIMENSIONS.has(f.dimension) && /^\*+$/.test(x)));
  return f.op === 'is_not' ? !listsEmpty : listsEmpty;
}

/** `[op, dimension, values]`, the filter form of `POST query` bodies; gives a Filter. Same limits and messages as parseFilters. */
export const FilterTuple = v.pipe(
  v.strictTuple([
    v.picklist(FILTER_OPS, `filters: an operator is one of ${FILTER_OPS.join(', ')}`),
    v.pipe(v.string(), v.check(isFilterDimension, (issue) => Message.unknownDimension(String(issue.input)))),
    v.pipe(
      v.array(v.pipe(v.string(), v.maxLength(FILTER_VALUE_MAX_LENGTH, `filters: a value may have at most ${FILTER_VALUE_MAX_LENGTH} characters`)), 'filters: values must be an array of strings'),
      v.minLength(1, 'filters: a condition needs at least one value'),
      v.maxLength(FILTER_VALUES_MAX, `filters: at most ${FILTER_VALUES_MAX} values in one condition`),
    ),
  ]),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const [op, dimension, values] = dataset.value;
    const problem = valuesProblem(op, dimension, values);
    if (problem) addIssue({ message: problem });
  }),
  v.transform(([op, dimension, values]): Filter => ({ op, dimension: dimension as FilterDimension, values })),
);

/** The `filters` of a `POST query` body: at most FILTERS_MAX tuples, all of which must hold. */
export const FiltersBody = v.pipe(v.array(FilterTuple), v.maxLength(FILTERS_MAX, Message.tooMany));
