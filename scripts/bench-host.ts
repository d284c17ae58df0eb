/**
 * How fast this host is right now, as one figure a reader can compare between benchmark runs.
 * Shared cloud cores vary by a factor of two to three with their neighbours' load, which moves
 * every throughput and latency figure with them; printing this beside the results tells a slow
 * host from a slow build.
 */
import { createHash } from 'node:crypto';

/** Milliseconds for a fixed single-threaded workload shaped like ingestion (JSON encoding and hashing). */
export function hostCalibrationMs(): number {
  const row: Record<string, unknown> = { project_id: 'prj_calibration', ts: '2026-01-01 00:00:00.000', kind: 'pageview', visitor_id: '1234567890123', path: '/blog/post', referrer_source: 'Google', country_code: 'DE', browser: 'Chrome', os: 'Windows', device: 'Desktop' };
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < 100_000; i++) {
    row.path = `/blog/post-${i}`;
    const json = JSON.stringify(row);
    sink += createHash('sha256').update(json).digest()[0]!;
  }
  const ms = performance.now() - start;
  // Keep the loop's result observable so it is not optimised away.
  if (sink < 0) console.log(sink);
  return ms;
}

/** The calibration as a report line: the best of three runs, so one interruption does not count. */
export function hostCalibrationLine(): string {
  const runs = [hostCalibrationMs(), hostCalibrationMs(), hostCalibrationMs()];
  return `host speed: ${Math.min(...runs).toFixed(0)} ms for the fixed calibration workload (best of 3; lower is faster; compare between runs)`;
}
