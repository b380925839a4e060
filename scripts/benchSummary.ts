/**
 * `npm run bench:summary` (the last step of `npm run bench`): one table of every ratio the benchmarks wrote, each
 * from the newest figures file of its benchmark under .bench/, with when it ran and the load the machine had then.
 * Each ratio was measured against its own baseline in its own run; this only gathers them. Benchmarks left out of
 * `npm run bench` for their length (`bench:soak`, `bench:scale`) show here from their newest run, whenever that was:
 * the soak's buy-under-the-mix ratios, its 5xx count and its RSS growth among them. Writes .bench/summary.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fixed, table } from './bench/report';

const ROOT = path.resolve(__dirname, '..');
const DIR = path.join(ROOT, '.bench');
/** `<bench>-<ISO time with - for : and .>.json`, as writeFigures names them. */
const FIGURES = /^([a-z][a-z0-9-]*?)-(\d{4}-\d{2}-\d{2}T[\d-]+Z)\.json$/;

interface Row {
  bench: string;
  ratio: string;
  value: number;
  ranAt: string;
  loadAverage: number | null;
}

/** Every number under `ratios`, by its path (`pipeline.p50`). */
function leaves(value: unknown, prefix: string[] = []): Array<[string, number]> {
  if (typeof value === 'number' && Number.isFinite(value)) return [[prefix.join('.'), value]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...prefix, key]));
}

function newestByBench(): Map<string, string> {
  const newest = new Map<string, { file: string; stamp: string }>();
  for (const file of fs.existsSync(DIR) ? fs.readdirSync(DIR) : []) {
    const match = FIGURES.exec(file);
    if (!match) continue;
    const [, bench, stamp] = match as unknown as [string, string, string];
    const held = newest.get(bench);
    if (!held || stamp > held.stamp) newest.set(bench, { file, stamp });
  }
  return new Map([...newest].map(([bench, { file }]) => [bench, path.join(DIR, file)]));
}

function main(): void {
  const rows: Row[] = [];
  for (const [bench, file] of [...newestByBench()].sort(([a], [b]) => a.localeCompare(b))) {
    const figures = JSON.parse(fs.readFileSync(file, 'utf8')) as { startedAt?: string; ratios?: unknown; machine?: { loadAverage?: number[] } };
    for (const [ratio, value] of leaves(figures.ratios)) {
      rows.push({ bench, ratio, value, ranAt: figures.startedAt ?? '', loadAverage: figures.machine?.loadAverage?.[0] ?? null });
    }
  }
  if (rows.length === 0) {
    console.log('no benchmark figures under .bench/: run npm run bench first');
    process.exitCode = 1;
    return;
  }
  console.log(
    table(
      ['bench', 'ratio', 'value', 'ran at', 'load average'],
      rows.map((r) => [r.bench, r.ratio, fixed(r.value, 2), r.ranAt, r.loadAverage === null ? '' : fixed(r.loadAverage, 2)]),
    ),
  );
  const out = path.join(DIR, 'summary.json');
  fs.writeFileSync(out, `${JSON.stringify({ writtenAt: new Date().toISOString(), ratios: rows }, null, 2)}\n`);
  console.log(`\nsummary written to ${path.relative(process.cwd(), out) || out}`);
}

main();
