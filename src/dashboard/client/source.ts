import type { View } from './view.js';

/** Where the dashboard reads reports from: the signed-in API, or the public share API. */
export interface ReportSource {
  domain: string;
  /** The project's time zone: custom ranges are dates there. */
  timeZone: string;
  /** True on /share pages: read-only, aggregates only. */
  share: boolean;
  report<T>(name: string, params?: Record<string, string | number | undefined>): Promise<T>;
}

/** What every card reads: where from, the current view, and how to move to another view (a new history entry). */
export interface Ctx {
  source: ReportSource;
  view: View;
  navigate(next: View): void;
}
