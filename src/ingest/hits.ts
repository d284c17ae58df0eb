import * as v from 'valibot';
import type { Deps } from '../deps.js';
import type { Project } from '../projects/store.js';
import { detectBot, verifyCrawler } from './enrich/bots.js';
import { firstIssue, HitItem } from './event-schema.js';
import { botHitRow, enrichEvent } from './pipeline.js';
import type { IngestState } from './state.js';

export interface HitsResult {
  accepted: number;
  bots: number;
  rejected: number;
  errors: { index: number; error: string }[];
}

/**
 * Records server-side request logs: bot user agents become `bot_hits` rows (verified by the
 * operator's published IP ranges or forward-confirmed reverse DNS), everything else a pageview enriched exactly like a tracker
 * event. Invalid entries and excluded IPs are rejected one by one; the rest are kept.
 */
export async function recordHits(state: IngestState, deps: Pick<Deps, 'sink' | 'clock'>, project: Project, items: unknown[]): Promise<HitsResult> {
  const result: HitsResult = { accepted: 0, bots: 0, rejected: 0, errors: [] };
  const events: Record<string, unknown>[] = [];
  const bots: Record<string, unknown>[] = [];
  const now = deps.clock.now();
  for (let index = 0; index < items.length; index++) {
    const parsed = v.safeParse(HitItem, items[index]);
    if (!parsed.success) {
      result.rejected++;
      result.errors.push({ index, error: firstIssue(parsed.issues) });
      continue;
    }
    const hit = parsed.output;
    if (await state.isExcluded(project.id, hit.ip)) {
      result.rejected++;
      result.errors.push({ index, error: 'ip is excluded for this project' });
      continue;
    }
    const at = hit.ts ? Date.parse(hit.ts) : now;
    const bot = detectBot(hit.userAgent);
    if (bot) {
      const verified = await verifyCrawler(bot.slug, hit.ip, { rdns: state.rdns });
      bots.push(botHitRow(project.id, bot, { verified, path: hit.path, status: hit.status, userAgent: hit.userAgent, now: at }));
      result.bots++;
      continue;
    }
    // Concatenated, not resolved: a path like //other.host stays a path of this site.
    const url = new URL(`https://${project.domain}${hit.path}`);
    events.push(await enrichEvent(state, project, { kind: 'pageview', url, referrer: hit.referrer }, { ip: hit.ip, userAgent: hit.userAgent, now: at }));
    result.accepted++;
  }
  await deps.sink.write('bot_hits', bots);
  await deps.sink.write('events', events);
  return result;
}
