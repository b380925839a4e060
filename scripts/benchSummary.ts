/**
 * `npm run bench:summary` (the last step of `npm run bench`): one table of every ratio the benchmarks wrote, and of
 * the plain figures they hold goals for (a lag in ms, a rebuild in entries/s), each from the newest figures file of
 * its benchmark under .bench/, with the goal, whether it was met, when it ran and the load the machine had then.
 * A benchmark run in another shape (every RPC call delayed, the chain or the projector in its own process, another
 * ledger length) is a row of its own, so an in-process figure and a delayed one both show. Each ratio was measured
 * against its own baseline in its own run; this only gathers them. Benchmarks left out of `npm run bench` for their
 * length (`bench:soak`, `bench:scale`) show here from their newest run, whenever that was. Writes .bench/summary.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fixed, table } from './bench/report';

const ROOT = path.resolve(__dirname, '..');
const DIR = path.join(ROOT, '.bench');
/** `<bench>-<ISO time with - for : and .>.json`, as writeFigures names them. */
const FIGURES = /^([a-z][a-z0-9-]*?)-(\d{4}-\d{2}-\d{2}T[\d-]+Z)\.json$/;

/** What a benchmark may claim of a figure, keyed in `goals` by the figure's path (`pipeline.tps`). */
interface Goal {
  atLeast?: number;
  atMost?: number;
}

/** The parts of a figures file the summary reads. */
interface Figures {
  startedAt?: string;
  settings?: Record<string, unknown>;
  machine?: { loadAverage?: number[] };
  /** Ratios against a baseline of the same run, by path. */
  ratios?: unknown;
  /** Plain figures (ms, entries/s, MB) that a goal names, by path. */
  measures?: unknown;
  goals?: Record<string, Goal>;
}

interface Row {
  bench: string;
  figure: string;
  kind: 'ratio' | 'measure';
  value: number;
  goal: string | null;
  met: boolean | null;
  ranAt: string;
  loadAverage: number | null;
}

/** Every number under `value`, by its path (`pipeline.p50`). */
function leaves(value: unknown, prefix: string[] = []): Array<[string, number]> {
  if (typeof value === 'number' && Number.isFinite(value)) return [[prefix.join('.'), value]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...prefix, key]));
}

/** The shape a benchmark ran in, from its settings: a figure taken behind a delayed RPC is not the in-process one. */
function shapeOf(settings: Record<string, unknown> = {}): string {
  const parts: string[] = [];
  if (typeof settings.rpcDelayMs === 'number' && settings.rpcDelayMs > 0) parts.push(`RPC +${settings.rpcDelayMs} ms`);
  if (settings.chainInChild === true) parts.push('chain in its own process');
  if (settings.split === true) parts.push('projector in its own process');
  if (typeof settings.entries === 'number') parts.push(`${settings.entries.toLocaleString('en-US')} entries`);
  return parts.join(', ');
}

function goalText(goal: Goal): string {
  return [goal.atLeast !== undefined ? `>= ${goal.atLeast}` : '', goal.atMost !== undefined ? `<= ${goal.atMost}` : ''].filter(Boolean).join(' and ');
}

function meets(value: number, goal: Goal): boolean {
  return (goal.atLeast === undefined || value >= goal.atLeast) && (goal.atMost === undefined || value <= goal.atMost);
}

/** The newest figures file of each benchmark in each shape it ran in. */
function newestByBench(): Map<string, { file: string; figures: Figures }> {
  const newest = new Map<string, { file: string; stamp: string; figures: Figures }>();
  for (const file of fs.existsSync(DIR) ? fs.readdirSync(DIR) : []) {
    const match = FIGURES.exec(file);
    if (!match) continue;
    const [, name, stamp] = match as unknown as [string, string, string];
    const figures = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Figures;
    const shape = shapeOf(figures.settings);
    const bench = shape ? `${name} (${shape})` : name;
    const held = newest.get(bench);
    if (!held || stamp > held.stamp) newest.set(bench, { file, stamp, figures });
  }
  return new Map([...newest].map(([bench, { file, figures }]) => [bench, { file: path.join(DIR, file), figures }]));
}

function main(): void {
  const rows: Row[] = [];
  for (const [bench, { figures }] of [...newestByBench()].sort(([a], [b]) => a.localeCompare(b))) {
    const goals = figures.goals ?? {};
    for (const [kind, values] of [['ratio', figures.ratios], ['measure', figures.measures]] as const) {
      for (const [figure, value] of leaves(values)) {
        const goal = goals[figure];
        rows.push({
          bench,
          figure,
          kind,
          value,
          goal: goal ? goalText(goal) : null,
          met: goal ? meets(value, goal) : null,
          ranAt: figures.startedAt ?? '',
          loadAverage: figures.machine?.loadAverage?.[0] ?? null,
        });
      }
    }
  }
  if (rows.length === 0) {
    console.log('no benchmark figures under .bench/: run npm run bench first');
    process.exitCode = 1;
    return;
  }
  console.log(
    table(
      ['bench', 'figure', 'value', 'goal', 'met', 'ran at', 'load average'],
      rows.map((r) => [
        r.bench,
        r.kind === 'ratio' ? `${r.figure} (x)` : r.figure,
        fixed(r.value, r.kind === 'ratio' ? 2 : 1),
        r.goal ?? '',
        r.met === null ? '' : r.met ? 'yes' : 'NO',
        r.ranAt,
        r.loadAverage === null ? '' : fixed(r.loadAverage, 2),
      ]),
    ),
  );
  const withGoals = rows.filter((r) => r.met !== null);
  console.log(`\ngoals met: ${withGoals.filter((r) => r.met).length} of ${withGoals.length}`);
  const out = path.join(DIR, 'summary.json');
  fs.writeFileSync(out, `${JSON.stringify({ writtenAt: new Date().toISOString(), figures: rows }, null, 2)}\n`);
  console.log(`summary written to ${path.relative(process.cwd(), out) || out}`);
}

main();
