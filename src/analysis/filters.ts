// TEMPORARY placeholder (not committed)
import type { Binder } from './binder.js';
import type { Filter } from './question.js';
export function filterCondition(f: Filter, target: string, binder: Binder): string {
  const list = binder.bind(f.values, 'Array(String)');
  if (f.op === 'is') return `${target} IN ${list}`;
  if (f.op === 'is_not') return `NOT (${target} IN ${list})`;
  return `multiSearchAnyCaseInsensitiveUTF8(${target}, ${list})`;
}
/** TEMPORARY: minimal grammar without escapes; the real module replaces this file. */
export function parseFilters(text: string): Filter[] {
  if (!text) return [];
  return text.split(';').map((part) => {
    const m = /^([a-zA-Z:_]+)(==|!=|~=)(.*)$/.exec(part);
    if (!m) throw new Error(`filters: "${part}" must be <dimension>==value, <dimension>!=value or <dimension>~=text`);
    return { dimension: m[1] as Filter['dimension'], op: m[2] === '==' ? 'is' : m[2] === '!=' ? 'is_not' : 'contains', values: m[3]!.split('|') };
  });
}
