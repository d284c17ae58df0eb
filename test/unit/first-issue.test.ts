import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { EventBody, firstIssue, HitItem, ImportLine } from '../../src/ingest/event-schema.js';

const messageOf = (schema: v.GenericSchema, input: unknown) => {
  const parsed = v.safeParse(schema, input);
  if (parsed.success) throw new Error('expected a refusal');
  return firstIssue(parsed.issues);
};

describe('firstIssue: the 400 message names what is wrong', () => {
  it.each([
    [EventBody, {}, 'site is required'],
    [EventBody, { site: 'prj_x', url: 'https://a.example/' }, 'kind is required'],
    [EventBody, [1, 2], 'body must be a JSON object'],
    [EventBody, 'text', 'body must be a JSON object'],
    [EventBody, { site: 'prj_x', kind: 'pageview', url: 7 }, 'url must be a string'],
    [EventBody, { site: 'prj_x', kind: 'vitals', url: 'https://a.example/', vitals: 5 }, 'vitals must be an object'],
    [ImportLine, { kind: 'pageview' }, 'timestamp is required'],
    [ImportLine, [], 'each line must be a JSON object'],
    [HitItem, { path: '/' }, 'userAgent is required'],
  ])('%#: %j', (schema, input, message) => {
    expect(messageOf(schema as v.GenericSchema, input)).toBe(message);
  });
});
