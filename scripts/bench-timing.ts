/**
 * What every latency benchmark shares: timed runs after a warm-up, percentiles, a plain-text
 * table, integer flags and the machine's load (the cores are often shared with other work).
 */
import { availableParallelism, loadavg } from 'node:os';
import { argValue } from './gen-events.js';

/** `--name N` as a positive integer, else `fallback`. */
export function intArg(name: string, fallback: number): number {
  const n = Number(argValue(name) ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

/** The nearest-rank percentile `p` (0–100) of `samples`. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Milliseconds of `runs` calls of `fn`, after one untimed warm-up call and `settle` (the app's
 * background work the warm-up started: the parts of closed hours a first ask sums after answering).
 */
export async function timeRuns(runs: number, fn: () => Promise<unknown>, settle?: () => Promise<unknown> | undefined): Promise<number[]> {
  await fn(); // warm-up: first-touch of parts and marks is not what a dashboard sees
  await settle?.();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/**
 * Wall and CPU milliseconds of `runs` calls of `fn` after a warm-up (its own wall time: `first`)
 * and `settle` (as timeRuns). CPU time is the whole process's (the embedded engine runs its
 * threads in-process), so it stays meaningful when other work shares the cores and stretches wall times.
 */
export async function timeRunsWithCpu(runs: number, fn: () => Promise<unknown>, settle?: () => Promise<unknown> | undefined): Promise<{ wall: number[]; cpu: number[]; first: number }> {
  const started = performance.now();
  await fn();
  const first = performance.now() - started;
  await settle?.();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(c);
    wall.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall, cpu, first };
}

/** A duration in ms with one decimal, or a dash. */
export const ms = (n: number | undefined) => (n === undefined ? '—' : n.toFixed(1));

/** Prints `rows` under `header`, the first `leftColumns` columns left-aligned and the rest right-aligned. */
export function printTable(header: string[], rows: string[][], leftColumns = 2): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** The 1, 5 and 15 minute load averages beside the core count, as `uptime` prints them. */
export function loadLine(): string {
  const [a, b, c] = loadavg().map((n) => n.toFixed(2));
  return `load average: ${a}, ${b}, ${c} (1/5/15 min) on ${availableParallelism()} cores`;
}
