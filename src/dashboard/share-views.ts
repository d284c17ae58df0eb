import * as v from 'valibot';
import { BotsResponse } from '../reports/defs/bots.js';
import { GoalsResponse } from '../reports/defs/goals.js';
import { PerformanceResponse } from '../reports/defs/performance.js';
import { PeriodEntries } from '../reports/shape.js';

/**
 * What a public stats page may read of each shared report: exactly what the page draws
 * (src/dashboard/client/dashboard.ts with `share: true`). The schema is the allow-list: parsing a
 * signed-in answer with it drops every other field (valibot objects strip unknown keys), so a
 * field added to a report later stays private until it is added here.
 */
const goal = GoalsResponse.entries.goals.item;
const bots = BotsResponse.entries.data;

/** Goals: progress only. Ids, types and matching values (the definitions) stay private. */
const SharedGoals = v.object({
  ...PeriodEntries,
  goals: v.array(v.pick(goal, ['name', 'target', 'format', 'current', 'conversionRate', 'currency'])),
});

/** Bot traffic: the totals and the top bots by name; no daily series, no crawled paths, no slugs. */
const SharedBots = v.object({
  ...PeriodEntries,
  filter: BotsResponse.entries.filter,
  data: v.object({
    totals: bots.entries.totals,
    topBots: v.array(v.pick(bots.entries.topBots.item, ['name', 'category', 'count'])),
  }),
});

/** Core Web Vitals: the overall figures; not the per-page breakdown. */
const SharedPerformance = v.object({ ...PeriodEntries, overall: PerformanceResponse.entries.overall });

/**
 * Reports a public stats page shows, each with the schema of its public answer, or null when the
 * page draws the whole signed-in answer. Per-visitor reports, funnels (their definitions are not
 * public) and browsers/os (the devices report carries both) are not shared.
 */
export const SHARED_VIEWS = {
  stats: null,
  timeseries: null,
  pages: null,
  referrers: null,
  countries: null,
  cities: null,
  devices: null,
  events: null,
  goals: SharedGoals,
  bots: SharedBots,
  performance: SharedPerformance,
} as const satisfies Record<string, v.GenericSchema | null>;

export type SharedReport = keyof typeof SHARED_VIEWS;
