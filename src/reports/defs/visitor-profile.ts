import * as v from 'valibot';
import { ApiError } from '../../errors.js';
import { defineReport } from '../definition.js';
import { generalPeriod, reportQuery } from '../params.js';
import { periodParams, queryRows } from '../query.js';
import { num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { RAW_WINDOW } from '../sql/window.js';
import { findVisitor, iso, nullableStr, VisitorEntries } from './visitors.js';

/** Most recent sessions and events a profile lists. */
export const PROFILE_MAX_SESSIONS = 100;
export const PROFILE_MAX_EVENTS = 200;
export const VISITOR_NOT_FOUND = 'Visitor not found';

const MALFORMED = 'visitorId must be an unsigned 64-bit integer in decimal (1–20 digits)';
const UINT64_MAX = 18446744073709551615n;
/** 1–20 decimal digits within the UInt64 range (one check: valibot runs every pipe step). */
const isUint64 = (id: string) => /^\d{1,20}$/.test(id) && BigInt(id) <= UINT64_MAX;

const SESSIONS_SQL = `
SELECT toString(session_id) AS session,
       toUnixTimestamp64Milli(min(ts)) AS start_ms,
       toUnixTimestamp64Milli(max(ts)) AS end_ms,
       countIf(kind = 'pageview') AS pageview_count,
       argMinIf(path, ts, kind = 'pageview') AS entry_path,
       argMaxIf(path, ts, kind = 'pageview') AS exit_path,
       argMinIf(toString(referrer_source), ts, kind = 'pageview') AS first_referrer
FROM events
WHERE ${RAW_WINDOW} AND visitor_id = {visitorId:UInt64}
GROUP BY session_id
ORDER BY start_ms DESC, session_id ASC
LIMIT {maxSessions:UInt32}`;

const EVENTS_SQL = `
SELECT toString(session_id) AS session, toUnixTimestamp64Milli(ts) AS ts_ms, toString(kind) AS event_kind, path,
       toString(event_name) AS event_label, amount_cents AS amount, toString(currency) AS currency_code
FROM events
WHERE ${RAW_WINDOW} AND visitor_id = {visitorId:UInt64} AND kind IN ('pageview', 'custom', 'transaction')
ORDER BY ts DESC, kind ASC, path ASC
LIMIT {maxEvents:UInt32}`;

const nullableNum = (description: string) => v.pipe(v.nullable(v.number()), v.description(description));

const ProfileEvent = v.object({
  ts: str('Event time (ISO 8601, UTC)'),
  kind: v.pipe(v.picklist(['pageview', 'custom', 'transaction']), v.description('Event kind')),
  path: str('Page path'),
  name: nullableStr('Event name (custom and transaction); null for pageviews'),
  amountCents: nullableNum('Transaction amount in minor units; null otherwise'),
  currency: nullableStr('ISO 4217 code of a transaction; null otherwise'),
});
const ProfileSession = v.object({
  sessionId: str('Session id (unsigned 64-bit, decimal)'),
  start: str('First event of the session in the period (ISO 8601, UTC)'),
  end: str('Last event of the session in the period (ISO 8601, UTC)'),
  pageviews: num('Pageviews in the session'),
  entryPath: nullableStr('First pageview path; null without pageviews'),
  exitPath: nullableStr('Last pageview path; null without pageviews'),
  referrer: nullableStr('Referrer source of the first pageview; null without pageviews'),
  events: v.array(ProfileEvent),
});

const { sessions: _sessionCount, ...SummaryEntries } = VisitorEntries;
export const VisitorProfileResponse = v.object({
  ...PeriodEntries,
  ...SummaryEntries,
  sessionCount: num('Sessions in the period'),
  totalDurationSeconds: num('Sum of visit durations from leave events, seconds'),
  sessions: v.pipe(
    v.array(ProfileSession),
    v.description(`Up to ${PROFILE_MAX_SESSIONS} most recent sessions, newest first; their events oldest first, of the visitor's ${PROFILE_MAX_EVENTS} most recent pageviews, custom and transaction events`),
  ),
});
type Profile = v.InferOutput<typeof VisitorProfileResponse>;
type SessionItem = v.InferOutput<typeof ProfileSession>;

/**
 * GET /:domain/visitors/:visitorId — one visitor's period: summary, sessions and recent events.
 * A malformed id answers 400; a well-formed id with no event in the period answers 404.
 */
export const visitorProfileReport = defineReport({
  name: 'visitor_profile',
  path: '/:domain/visitors/:visitorId',
  summary: 'Visitor profile: summary, sessions and recent events',
  description:
    `A malformed visitorId (not 1–20 decimal digits, or above 2^64−1) answers 400; a visitor without events in the period answers 404 \`{"error":"${VISITOR_NOT_FOUND}"}\`. ` +
    '`sessionCount` is the number of sessions; `sessions` lists the most recent ones.',
  query: reportQuery(generalPeriod()),
  params: v.object({
    domain: v.string(),
    visitorId: v.pipe(v.string(MALFORMED), v.check(isUint64, MALFORMED)),
  }),
  response: VisitorProfileResponse,
  async run(ctx, input): Promise<Profile> {
    const { visitorId } = input as typeof input & { visitorId: string };
    const period = resolveFor(ctx, input.period);
    const params = { ...periodParams(ctx.project.id, period), visitorId, maxSessions: PROFILE_MAX_SESSIONS, maxEvents: PROFILE_MAX_EVENTS };
    const [summary, sessionRows, eventRows] = await Promise.all([
      findVisitor(ctx, params),
      queryRows(ctx.deps, SESSIONS_SQL, params, {
        session: 'string',
        start_ms: 'number',
        end_ms: 'number',
        pageview_count: 'number',
        entry_path: 'string',
        exit_path: 'string',
        first_referrer: 'string',
      }),
      queryRows(ctx.deps, EVENTS_SQL, params, {
        session: 'string',
        ts_ms: 'number',
        event_kind: 'string',
        path: 'string',
        event_label: 'string',
        amount: 'number',
        currency_code: 'string',
      }),
    ]);
    if (!summary) throw new ApiError(404, VISITOR_NOT_FOUND);

    const sessions: SessionItem[] = sessionRows.map((s) => {
      const seen = s.pageview_count > 0;
      return {
        sessionId: s.session,
        start: iso(s.start_ms),
        end: iso(s.end_ms),
        pageviews: s.pageview_count,
        entryPath: seen ? s.entry_path : null,
        exitPath: seen ? s.exit_path : null,
        referrer: seen ? s.first_referrer : null,
        events: [],
      };
    });
    const bySession = new Map(sessions.map((s) => [s.sessionId, s]));
    // Rows come newest first; walking them backwards fills each session oldest first.
    for (const e of [...eventRows].reverse()) {
      const isTransaction = e.event_kind === 'transaction';
      bySession.get(e.session)?.events.push({
        ts: iso(e.ts_ms),
        kind: e.event_kind as SessionItem['events'][number]['kind'],
        path: e.path,
        name: e.event_kind === 'pageview' ? null : e.event_label,
        amountCents: isTransaction ? e.amount : null,
        currency: isTransaction ? e.currency_code : null,
      });
    }

    const { sessions: sessionCount, durationMs, ...rest } = summary;
    return { ...periodFields(period), ...rest, sessionCount, totalDurationSeconds: durationMs / 1000, sessions };
  },
  csv: {
    title: 'visitor sessions',
    columns: [
      { header: 'session_id', value: (s: SessionItem) => s.sessionId },
      { header: 'start', value: (s) => s.start },
      { header: 'end', value: (s) => s.end },
      { header: 'pageviews', value: (s) => s.pageviews },
      { header: 'entry_path', value: (s) => s.entryPath },
      { header: 'exit_path', value: (s) => s.exitPath },
      { header: 'referrer', value: (s) => s.referrer },
      { header: 'events', value: (s) => s.events.length },
    ],
    rows: (r: Profile) => r.sessions,
  },
});
