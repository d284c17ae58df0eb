import type { QueryParams } from '../reports/query.js';

/** ClickHouse types a user value is bound as. */
export type BoundType = 'String' | 'Array(String)' | 'UInt32' | 'UInt64' | 'Int64';

/**
 * Collects the bound parameters of one query under generated names, so builders compose without
 * name clashes. `bind` answers the `{name:Type}` placeholder to put in SQL text: user values reach
 * SQL only this way.
 */
export class Binder {
  readonly params: QueryParams;
  private next = 0;

  constructor(base: QueryParams = {}) {
    this.params = { ...base };
  }

  bind(value: string | number | readonly string[], type: BoundType): string {
    const name = `a${this.next++}`;
    this.params[name] = value as QueryParams[string];
    return `{${name}:${type}}`;
  }
}
