import { withAnswerCache, type ReportDefinition } from './definition.js';
import { statsReport } from './defs/stats.js';
import { timeseriesReport } from './defs/timeseries.js';
import { pagesReport } from './defs/pages.js';
import { referrersReport } from './defs/referrers.js';
import { countriesReport } from './defs/countries.js';
import { citiesReport } from './defs/cities.js';
import { devicesReport } from './defs/devices.js';
import { browsersReport, osReport } from './defs/tech.js';
import { eventsReport } from './defs/events.js';
import { goalsReport } from './defs/goals.js';
import { botsReport } from './defs/bots.js';
import { visitorsReport } from './defs/visitors.js';
import { visitorProfileReport } from './defs/visitor-profile.js';
import { performanceReport } from './defs/performance.js';
import { funnelReport } from './defs/funnels.js';

/**
 * Every report, in the order they appear in the API document, the MCP tool list and the
 * export, each answered through the answer cache unless it opts out. Adding a report = one
 * import and one entry here.
 */
export const reports: ReportDefinition[] = [
  statsReport,
  timeseriesReport,
  pagesReport,
  referrersReport,
  countriesReport,
  citiesReport,
  devicesReport,
  browsersReport,
  osReport,
  eventsReport,
  goalsReport,
  botsReport,
  visitorsReport,
  visitorProfileReport,
  performanceReport,
  funnelReport,
].map((def) => withAnswerCache(def as ReportDefinition));

/** The report called `name`, or undefined. */
export function findReport(name: string): ReportDefinition | undefined {
  return reports.find((r) => r.name === name);
}
