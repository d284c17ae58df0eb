import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQuestion } from '../../src/analysis/run.js';
import type { Filter } from '../../src/analysis/question.js';
import { resolvePeriod } from '../../src/reports/periods.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';
import { refAnswer, type RefQuestion } from '../helpers/reference-analysis.js';

/*
 * A filtered question groups only the sessions that can pass its filters (README "Analysis"):
 * those holding an event that passes each visit-level filter on the attribute's own kinds, and
 * one counted event passing the event-level filters. These are the visits such a shortcut gets
 * wrong when it is too eager: attributes that are empty for want of an event (a visit without a
 * pageview has no entry page), attributes taken from a custom event, kept events that are not
 * pageviews. Each answer is checked against the hand count and against the reference.
 */

const NOW = Date.parse('2026-06-10T12:00:00Z');
const MIN = 60_000;
let h: Harness;
let projectId: string;

/** A session's events a minute apart from `start`, its attributes applying to each. */
function session(id: number, start: number, base: Partial<GenEvent>, steps: Partial<GenEvent>[]): GenEvent[] {
  return steps.map((step, i) => makeEvent({ ts: start + i * MIN, visitor: id, session: id, ...base, ...step }));
}

const pv = (path: string, e: Partial<GenEvent> = {}): Partial<GenEvent> => ({ kind: 'pageview', path, ...e });
const custom = (eventName: string, e: Partial<GenEvent> = {}): Partial<GenEvent> => ({ kind: 'custom', eventName, path: '/app', ...e });

const EVENTS: GenEvent[] = [
  // No pageview: its entry and exit pages are empty, and `entryPage==` or `entryPage==*` keeps it.
  ...session(1, NOW - 60 * MIN, { referrerSource: 'google.com' }, [custom('signup'), custom('upgrade')]),
  // Its source comes from the custom event it opens with; its pageviews say (direct).
  ...session(2, NOW - 50 * MIN, {}, [custom('signup', { referrerSource: 'google.com', countryCode: '' }), pv('/pricing', { referrerSource: '(direct)' }), pv('/docs')]),
  // An ordinary landing from google.com, and one from elsewhere whose later pageview came back from google.com.
  ...session(3, NOW - 40 * MIN, { referrerSource: 'google.com' }, [pv('/'), pv('/pricing', { referrerSource: '(direct)' })]),
  ...session(4, NOW - 30 * MIN, { referrerSource: 't.co' }, [pv('/blog'), pv('/pricing', { referrerSource: 'google.com' })]),
  // Empty country on its first counted event only.
  ...session(5, NOW - 20 * MIN, { countryCode: '' }, [pv('/docs'), pv('/', { countryCode: 'DE' })]),
];

beforeAll(async () => {
  h = await createHarness();
  projectId = unique('candidates');
  await insertEvents(h.deps.rowStore, projectId, EVENTS);
});
afterAll(closeHarness);

const is = (dimension: Filter['dimension'], ...values: string[]): Filter => ({ op: 'is', dimension, values });
const isNot = (dimension: Filter['dimension'], ...values: string[]): Filter => ({ op: 'is_not', dimension, values });

/** The question's sessions and events as runQuestion answers them, after checking it against the reference. */
async function ask(filters: Filter[], dimensions: RefQuestion['dimensions'] = []) {
  const period = resolvePeriod('today', 'UTC', NOW);
  const q: RefQuestion = { metrics: ['sessions', 'events', 'pageviews', 'bounceRate'], dimensions, filters };
  const got = await runQuestion(h.deps, projectId, period, q);
  expect(got).toEqual(refAnswer(EVENTS, { from: period.from, now: period.now, bucketTimeZone: period.bucketTimeZone }, q));
  return got;
}

describe('filtered questions group only the sessions that can pass', () => {
  it('an entry or exit page filter that holds for the empty value keeps visits without a pageview', async () => {
    expect(await ask([is('entryPage', '')])).toEqual([{ sessions: 1, events: 2, pageviews: 0, bounceRate: null }]);
    expect(await ask([is('exitPage', '*')])).toEqual([{ sessions: 5, events: 3, pageviews: 8, bounceRate: 0 }]);
    expect(await ask([isNot('entryPage', '/docs', '/')])).toEqual([{ sessions: 3, events: 3, pageviews: 4, bounceRate: 0 }]);
  });

  it('a source taken from a custom event, not the pageviews after it', async () => {
    expect(await ask([is('source', 'google.com')])).toEqual([{ sessions: 3, events: 3, pageviews: 4, bounceRate: 0 }]);
    expect(await ask([is('source', 'google.com'), is('page', '/pricing')], ['page'])).toEqual([{ page: '/pricing', sessions: 2, events: 0, pageviews: 2, bounceRate: 0 }]);
  });

  it('kept events that are custom events, and an empty attribute taken from the first counted event', async () => {
    expect(await ask([is('event', 'signup'), is('source', 'google.com')])).toEqual([{ sessions: 2, events: 2, pageviews: 0, bounceRate: 0 }]);
    expect(await ask([is('country', '')])).toEqual([{ sessions: 2, events: 1, pageviews: 4, bounceRate: 0 }]);
    expect(await ask([isNot('country', '')])).toEqual([{ sessions: 3, events: 2, pageviews: 4, bounceRate: 0 }]);
  });
});
