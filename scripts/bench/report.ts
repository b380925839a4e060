import { median, type Distribution } from './stats';

export type Target = 'floor' | 'baseline' | 'subject';

export interface RoundFigures {
  target: Target;
  round: number;
  requests: number;
  ok: number;
  errorCount: number;
  errors: Record<string, number>;
  errorSamples: Record<string, string>;
  sent: number;
  elapsedMs: number;
  rps: number;
  latencyMs: Distribution;
  /** Subject rounds only. */
  lag?: { ms: Distribution; unmatched: number; caughtUp: boolean };
}

export interface Summary {
  /** A no-op express route: the most any express route reaches on this machine. */
  floor: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  baseline: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  subject: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  lag: { p50Ms: number; p99Ms: number; unmatched: number };
  ratio: { rps: number; p99: number; floorRps: number };
  target: { rpsRatioAtLeast: number; p99RatioAtMost: number };
  met: boolean;
  /** Why the target is not met, if it is not. */
  shortfalls: string[];
}

export const TARGET_RPS_RATIO = 1.5;
export const TARGET_P99_RATIO = 1;

/** Median over rounds of each figure, and the verdict against the target. */
export function summarise(rounds: RoundFigures[]): Summary {
  const of = (target: Target) => {
    const mine = rounds.filter((r) => r.target === target);
    return {
      rps: median(mine.map((r) => r.rps)),
      p50Ms: median(mine.map((r) => r.latencyMs.p50)),
      p99Ms: median(mine.map((r) => r.latencyMs.p99)),
      errors: mine.reduce((sum, r) => sum + r.errorCount, 0),
    };
  };
  const floor = of('floor');
  const baseline = of('baseline');
  const subject = of('subject');
  const lagged = rounds.filter((r) => r.lag);
  const lag = {
    p50Ms: median(lagged.map((r) => r.lag!.ms.p50)),
    p99Ms: median(lagged.map((r) => r.lag!.ms.p99)),
    unmatched: lagged.reduce((sum, r) => sum + r.lag!.unmatched, 0),
  };
  const ratio = { rps: subject.rps / baseline.rps, p99: subject.p99Ms / baseline.p99Ms, floorRps: floor.rps / baseline.rps };
  const shortfalls: string[] = [];
  if (!(ratio.rps >= TARGET_RPS_RATIO)) shortfalls.push(`req/s is ${fixed(ratio.rps, 2)}x the baseline's, below ${TARGET_RPS_RATIO}x`);
  if (!(ratio.p99 <= TARGET_P99_RATIO)) shortfalls.push(`p99 is ${fixed(ratio.p99, 2)}x the baseline's, worse than ${TARGET_P99_RATIO}x`);
  if (subject.errors > 0) shortfalls.push(`${subject.errors} subject requests failed`);
  if (baseline.errors > 0) shortfalls.push(`${baseline.errors} baseline requests failed, so the comparison is unreliable`);
  return {
    floor,
    baseline,
    subject,
    lag,
    ratio,
    target: { rpsRatioAtLeast: TARGET_RPS_RATIO, p99RatioAtMost: TARGET_P99_RATIO },
    met: shortfalls.length === 0,
    shortfalls,
  };
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** Columns padded to their widest cell: the first two left-aligned (labels), the rest right-aligned (figures). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatReport(title: string, rounds: RoundFigures[], summary: Summary): string {
  const rows = rounds.map((r) => [
    r.target,
    String(r.round),
    fixed(r.rps, 0),
    fixed(r.latencyMs.p50, 1),
    fixed(r.latencyMs.p99, 1),
    String(r.errorCount),
    r.lag ? fixed(r.lag.ms.p50, 1) : '',
    r.lag ? fixed(r.lag.ms.p99, 1) : '',
  ]);
  rows.push(
    ['floor', 'median', fixed(summary.floor.rps, 0), fixed(summary.floor.p50Ms, 1), fixed(summary.floor.p99Ms, 1), String(summary.floor.errors), '', ''],
    ['baseline', 'median', fixed(summary.baseline.rps, 0), fixed(summary.baseline.p50Ms, 1), fixed(summary.baseline.p99Ms, 1), String(summary.baseline.errors), '', ''],
    ['subject', 'median', fixed(summary.subject.rps, 0), fixed(summary.subject.p50Ms, 1), fixed(summary.subject.p99Ms, 1), String(summary.subject.errors), fixed(summary.lag.p50Ms, 1), fixed(summary.lag.p99Ms, 1)],
  );
  const out = [
    title,
    '',
    table(['target', 'round', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'lag p50 ms', 'lag p99 ms'], rows),
    '',
    `subject/baseline  req/s ${fixed(summary.ratio.rps, 2)}x (target >= ${TARGET_RPS_RATIO}x)   p99 ${fixed(summary.ratio.p99, 2)}x (target <= ${TARGET_P99_RATIO}x)`,
    `floor/baseline    req/s ${fixed(summary.ratio.floorRps, 2)}x: a no-op express route, the ceiling of any route on this machine`,
    `projection lag (answer -> row visible), median of rounds: p50 ${fixed(summary.lag.p50Ms, 1)} ms, p99 ${fixed(summary.lag.p99Ms, 1)} ms` +
      (summary.lag.unmatched ? `; ${summary.lag.unmatched} answers never seen projected` : ''),
    summary.met ? 'target MET' : `target NOT met: ${summary.shortfalls.join('; ')}`,
  ];
  const errorLines = rounds.flatMap((r) => Object.entries(r.errors).map(([kind, n]) => `  ${r.target} round ${r.round}: ${n} x ${kind}: ${r.errorSamples[kind] ?? ''}`));
  if (errorLines.length) out.push('', 'errors:', ...errorLines);
  return out.join('\n');
}
