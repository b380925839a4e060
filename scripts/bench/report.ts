import { median, type Distribution } from './stats';

/** `subject` registers citizens; `posts` posts as registered citizens, on the same service. */
export type Target = 'floor' | 'baseline' | 'subject' | 'posts';

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
  /** Subject and posts rounds only. */
  lag?: { ms: Distribution; unmatched: number; caughtUp: boolean };
  /** Answer -> its `/ws` frame: every post of a posts round; a probe's posts during a subject round. */
  wsLag?: { ms: Distribution; unmatched: number };
  /** CPU ms per request sent, by process (the server, its PostgreSQL backends), warm-up and projection included. */
  cpuMsPerRequest?: Record<string, number>;
}

export interface Summary {
  /** A no-op express route: the most any express route reaches on this machine. */
  floor: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  baseline: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  subject: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  /** Absent when no posts rounds ran. */
  posts?: { rps: number; p50Ms: number; p99Ms: number; errors: number };
  lag: { p50Ms: number; p99Ms: number; unmatched: number };
  ratio: { rps: number; p99: number; floorRps: number; postsRps?: number; postsP99?: number };
  /** Median over rounds of each target's CPU ms per request, by process. */
  cpuMsPerRequest: Partial<Record<Target, Record<string, number>>>;
  target: { rpsRatioAtLeast: number; p99RatioAtMost: number };
  met: boolean;
  /** Why the target is not met, if it is not. */
  shortfalls: string[];
}

// Issue 15: register and posts at no less than the one-INSERT route on this machine.
export const TARGET_RPS_RATIO = 1.0;
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
  const posts = rounds.some((r) => r.target === 'posts') ? of('posts') : undefined;
  const lagged = rounds.filter((r) => r.lag && r.target === 'subject');
  const lag = {
    p50Ms: median(lagged.map((r) => r.lag!.ms.p50)),
    p99Ms: median(lagged.map((r) => r.lag!.ms.p99)),
    unmatched: lagged.reduce((sum, r) => sum + r.lag!.unmatched, 0),
  };
  const ratio = {
    rps: subject.rps / baseline.rps,
    p99: subject.p99Ms / baseline.p99Ms,
    floorRps: floor.rps / baseline.rps,
    ...(posts ? { postsRps: posts.rps / baseline.rps, postsP99: posts.p99Ms / baseline.p99Ms } : {}),
  };
  const shortfalls: string[] = [];
  if (!(ratio.rps >= TARGET_RPS_RATIO)) shortfalls.push(`req/s is ${fixed(ratio.rps, 2)}x the baseline's, below ${TARGET_RPS_RATIO}x`);
  if (!(ratio.p99 <= TARGET_P99_RATIO)) shortfalls.push(`p99 is ${fixed(ratio.p99, 2)}x the baseline's, worse than ${TARGET_P99_RATIO}x`);
  if (posts && !(ratio.postsRps! >= TARGET_RPS_RATIO)) shortfalls.push(`posts/s is ${fixed(ratio.postsRps!, 2)}x the baseline's req/s, below ${TARGET_RPS_RATIO}x`);
  if (posts && !(ratio.postsP99! <= TARGET_P99_RATIO)) shortfalls.push(`posts p99 is ${fixed(ratio.postsP99!, 2)}x the baseline's, worse than ${TARGET_P99_RATIO}x`);
  if (subject.errors > 0) shortfalls.push(`${subject.errors} subject requests failed`);
  if (posts && posts.errors > 0) shortfalls.push(`${posts.errors} posts requests failed`);
  if (baseline.errors > 0) shortfalls.push(`${baseline.errors} baseline requests failed, so the comparison is unreliable`);
  return {
    floor,
    baseline,
    subject,
    ...(posts ? { posts } : {}),
    lag,
    ratio,
    cpuMsPerRequest: cpuMedians(rounds),
    target: { rpsRatioAtLeast: TARGET_RPS_RATIO, p99RatioAtMost: TARGET_P99_RATIO },
    met: shortfalls.length === 0,
    shortfalls,
  };
}

function cpuMedians(rounds: RoundFigures[]): Partial<Record<Target, Record<string, number>>> {
  const out: Partial<Record<Target, Record<string, number>>> = {};
  for (const round of rounds) {
    if (!round.cpuMsPerRequest) continue;
    const mine = rounds.filter((r) => r.target === round.target && r.cpuMsPerRequest);
    out[round.target] = Object.fromEntries(Object.keys(round.cpuMsPerRequest).map((part) => [part, median(mine.map((r) => r.cpuMsPerRequest![part] ?? Number.NaN))]));
  }
  return out;
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
  if (summary.posts) rows.push(['posts', 'median', fixed(summary.posts.rps, 0), fixed(summary.posts.p50Ms, 1), fixed(summary.posts.p99Ms, 1), String(summary.posts.errors), '', '']);
  const out = [
    title,
    '',
    table(['target', 'round', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'lag p50 ms', 'lag p99 ms'], rows),
    '',
    `subject/baseline  req/s ${fixed(summary.ratio.rps, 2)}x (target >= ${TARGET_RPS_RATIO}x)   p99 ${fixed(summary.ratio.p99, 2)}x (target <= ${TARGET_P99_RATIO}x)`,
    ...(summary.posts ? [`posts/baseline    req/s ${fixed(summary.ratio.postsRps!, 2)}x (target >= ${TARGET_RPS_RATIO}x)   p99 ${fixed(summary.ratio.postsP99!, 2)}x (target <= ${TARGET_P99_RATIO}x)`] : []),
    `floor/baseline    req/s ${fixed(summary.ratio.floorRps, 2)}x: a no-op express route, the ceiling of any route on this machine`,
    `projection lag (answer -> row visible), median of rounds: p50 ${fixed(summary.lag.p50Ms, 1)} ms, p99 ${fixed(summary.lag.p99Ms, 1)} ms` +
      (summary.lag.unmatched ? `; ${summary.lag.unmatched} answers never seen projected` : ''),
    summary.met ? 'target MET' : `target NOT met: ${summary.shortfalls.join('; ')}`,
  ];
  const cpu = Object.entries(summary.cpuMsPerRequest);
  if (cpu.length) {
    out.push('', 'CPU ms per request sent (median of rounds; the server process, the PostgreSQL backends of its database):');
    for (const [target, parts] of cpu) out.push(`  ${target.padEnd(9)} ${Object.entries(parts!).map(([part, ms]) => `${part} ${fixed(ms, 3)}`).join('  ')}  total ${fixed(Object.values(parts!).reduce((a, b) => a + b, 0), 3)}`);
  }
  const errorLines = rounds.flatMap((r) => Object.entries(r.errors).map(([kind, n]) => `  ${r.target} round ${r.round}: ${n} x ${kind}: ${r.errorSamples[kind] ?? ''}`));
  if (errorLines.length) out.push('', 'errors:', ...errorLines);
  return out.join('\n');
}
