import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult } from './load';
import { fixed, table } from './report';
import { distribution, median, type Distribution } from './stats';

/**
 * What the benchmarks that set one target against another (rounds alternated, medians compared) share: the
 * figures of a round, their medians per target, the table, the error lines and the file of figures.
 */
export interface TargetRound<T extends string> {
  target: T;
  round: number;
  ok: number;
  errorCount: number;
  errors: Record<string, number>;
  errorSamples: Record<string, string>;
  tps: number;
  latencyMs: Distribution;
}

export interface TargetMedians {
  tps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export function roundOf<T extends string>(target: T, round: number, result: LoadResult): TargetRound<T> {
  return {
    target,
    round,
    ok: result.ok,
    errorCount: Object.values(result.errors).reduce((a, b) => a + b, 0),
    errors: result.errors,
    errorSamples: result.errorSamples,
    tps: (result.ok / result.elapsedMs) * 1000,
    latencyMs: distribution(result.latenciesMs),
  };
}

export const roundLine = (r: TargetRound<string>) => `${r.tps.toFixed(0)}/s, p50 ${fixed(r.latencyMs.p50, 1)} ms, p99 ${fixed(r.latencyMs.p99, 1)} ms, ${r.errorCount} errors\n`;

export function mediansOf<T extends string>(rounds: TargetRound<T>[], targets: readonly T[]): Record<T, TargetMedians> {
  return Object.fromEntries(
    targets.map((target) => {
      const mine = rounds.filter((r) => r.target === target);
      return [target, { tps: median(mine.map((r) => r.tps)), p50Ms: median(mine.map((r) => r.latencyMs.p50)), p99Ms: median(mine.map((r) => r.latencyMs.p99)), errors: mine.reduce((s, r) => s + r.errorCount, 0) }];
    }),
  ) as Record<T, TargetMedians>;
}

/** `subject` over `baseline`: below 1 is faster for latencies, slower for throughput. */
export function ratioOf(subject: TargetMedians, baseline: TargetMedians): { p50: number; p99: number; tps: number } {
  return { p50: subject.p50Ms / baseline.p50Ms, p99: subject.p99Ms / baseline.p99Ms, tps: subject.tps / baseline.tps };
}

/** The rounds, then each target's medians, then the error samples if any. */
export function roundsReport<T extends string>(rounds: TargetRound<T>[], targets: readonly T[], medians: Record<T, TargetMedians>): string[] {
  const rows = rounds.map((r) => [r.target, String(r.round), fixed(r.tps, 0), fixed(r.latencyMs.p50, 1), fixed(r.latencyMs.p99, 1), String(r.ok), String(r.errorCount)]);
  for (const target of targets) rows.push([target, 'median', fixed(medians[target].tps, 0), fixed(medians[target].p50Ms, 1), fixed(medians[target].p99Ms, 1), '', String(medians[target].errors)]);
  const out = [table(['target', 'round', 'req/s', 'p50 ms', 'p99 ms', 'ok', 'errors'], rows)];
  const errorLines = rounds.flatMap((r) => Object.entries(r.errors).map(([kind, n]) => `  ${r.target} round ${r.round}: ${n} x ${kind}: ${r.errorSamples[kind] ?? ''}`));
  if (errorLines.length) out.push('', 'errors:', ...errorLines);
  return out;
}

export function machineNow(): { cpus: number; cpuModel: string | undefined; memoryBytes: number; node: string; loadAverage: number[] } {
  return { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryBytes: os.totalmem(), node: process.version, loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))) };
}

/** Writes the figures to .bench/<name>-<timestamp>.json under `root`; returns the file. */
export function writeFigures(root: string, name: string, startedAt: Date, figures: Record<string, unknown>): string {
  const dir = path.join(root, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ startedAt: startedAt.toISOString(), ...figures }, null, 2)}\n`);
  return file;
}
