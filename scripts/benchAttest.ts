/**
 * `npm run bench:attest`: a full /attest re-verification from seq 0 over BENCH_ENTRIES (1,000,000) stored
 * ledger entries, in entries/s, against a raw sha256 over the same stored bytes in the same run (the same
 * keyset-paginated reads, each row's bytes hashed once, no verification); the goal is at least 0.8x raw.
 * Then the p99 of GET /healthz while a full pass runs against the same load while idle (goal: unchanged).
 *
 * The API (startServer) runs in this process on a fresh PostgreSQL database, dropped at the end; the entries
 * are correctly chained rows bulk-inserted into the event store's own table behind its back. The load runs
 * in a child process (scripts/bench/getLoadChild.ts), so its latencies are the server's alone. BENCH_ROUNDS
 * (3) of raw and full passes alternate; medians are reported. Writes .bench/attest-<timestamp>.json.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { startServer } from '../apps/api/src/server';
import { FULL_PASS_BATCH, GENESIS_HASH, LEDGER_STREAM, sealAndEncode, type EventStore } from '@svc/ledger';
import { freshDatabase, tempDir, testConfig } from '../test/support/env';
import { runBench, type Cleanup } from './bench/cleanup';
import type { LoadResult } from './bench/load';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { distribution, median, type Distribution } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const ENTRIES = Math.floor(setting('BENCH_ENTRIES', 1_000_000, 1));
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const INSERT_ROWS = 10_000;
const LOAD_CLIENTS = 4;
const TARGET_RATIO = 0.8;

interface Pass {
  kind: 'raw' | 'full';
  round: number;
  entries: number;
  ms: number;
  perSecond: number;
}

/** Correctly chained entries shaped like the ledger's own (a citizen's registration), written with unnest in pages. */
async function loadEntries(db: Kysely<any>, count: number): Promise<number> {
  let prev = GENESIS_HASH;
  let bytes = 0;
  const at = Date.now() - count;
  for (let from = 0; from < count; from += INSERT_ROWS) {
    const revisions: number[] = [];
    const ids: string[] = [];
    const datas: string[] = [];
    for (let seq = from; seq < Math.min(count, from + INSERT_ROWS); seq += 1) {
      const sealed = sealAndEncode(prev, {
        seq,
        type: 'CitizenRegistered',
        at: at + seq,
        actor: `agent_${seq.toString(36)}`,
        data: {
          agent_id: `agent_${seq.toString(36)}`,
          handle: `citizen${seq}`,
          model: 'bench-model-1',
          bio: 'a trading agent of the benchmark society',
          wallet: randomBytes(32).toString('base64url'),
          custody: 'service',
        },
      });
      prev = sealed.entry.hash;
      revisions.push(seq);
      ids.push(randomUUID());
      datas.push(sealed.bytes);
      bytes += Buffer.byteLength(sealed.bytes);
    }
    await sql`insert into es.events (stream, revision, event_id, type, data)
      select ${LEDGER_STREAM}, r, i, 'CitizenRegistered', d
      from unnest(${revisions}::bigint[], ${ids}::uuid[], ${datas}::text[]) as t(r, i, d)`.execute(db);
    process.stderr.write(`\rloading entries: ${Math.min(count, from + INSERT_ROWS)} / ${count}`);
  }
  process.stderr.write('\n');
  return bytes;
}

/** The same reads as a full pass, each row's stored bytes hashed once, nothing checked. */
async function rawPass(store: EventStore, head: number): Promise<number> {
  let next = 0;
  let sink = 0;
  while (next <= head) {
    const batch = await store.readForward(LEDGER_STREAM, next, Math.min(FULL_PASS_BATCH, head - next + 1));
    if (batch.length === 0) break;
    for (const row of batch) sink ^= createHash('sha256').update(row.data).digest()[0]!;
    next = batch[batch.length - 1]!.revision + 1;
    await nextTurn();
  }
  return next + (sink & 0);
}

/** The load runs in its own process: in this one it would wait on the pass's turns of the event loop too. */
function loadFromChild(options: { url: string; path: string; clients: number; warmupMs: number; durationMs: number }): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'bench', 'getLoadChild.ts'), JSON.stringify(options)],
      { cwd: ROOT, timeout: options.durationMs + 60_000, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as LoadResult)),
    );
  });
}

function passFigures(kind: Pass['kind'], round: number, entries: number, ms: number): Pass {
  return { kind, round, entries, ms, perSecond: entries / (ms / 1000) };
}

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const loadAverage = os.loadavg().map((n) => Number(n.toFixed(2)));
  const dataDir = tempDir('bench-attest');
  cleanup.add('remove the data directory', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const db = await freshDatabase('bench_attest');
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const config = testConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_RPS: '1000000',
    ATTEST_FULL_EVERY_MS: '0',
  });
  const api = await startServer(config);
  cleanup.add('stop the API', () => api.close());
  const { store, attestor, database } = api.services;

  const loadStarted = performance.now();
  const storedBytes = await loadEntries(database.db, ENTRIES);
  await sql`analyze es.events`.execute(database.db);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const head = await store.headRevision(LEDGER_STREAM);
  if (head !== ENTRIES - 1) throw new Error(`loaded ${head + 1} entries, expected ${ENTRIES}`);
  console.error(`loaded ${ENTRIES} entries (${fixed(storedBytes / 1e6, 0)} MB) in ${fixed(loadSeconds, 1)} s`);

  const full = async (): Promise<{ entries: number; ms: number }> => {
    const t0 = performance.now();
    const run = await attestor.startFull('request');
    if (!run.started) throw new Error('a full pass did not start');
    await run.done;
    const ms = performance.now() - t0;
    const report = (await attestor.attest()).full;
    if (!report?.ok || report.checked !== ENTRIES) throw new Error(`the full pass did not verify the chain: ${JSON.stringify(report)}`);
    return { entries: report.checked, ms };
  };

  // One unmeasured raw pass first, so both read from the same warm cache.
  await rawPass(store, head);
  const passes: Pass[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const t0 = performance.now();
    const entries = await rawPass(store, head);
    passes.push(passFigures('raw', round, entries, performance.now() - t0));
    const measured = await full();
    passes.push(passFigures('full', round, measured.entries, measured.ms));
    console.error(`round ${round}: raw ${fixed(passes.at(-2)!.perSecond, 0)}/s, full ${fixed(passes.at(-1)!.perSecond, 0)}/s`);
  }
  const rawPerSecond = median(passes.filter((p) => p.kind === 'raw').map((p) => p.perSecond));
  const fullPerSecond = median(passes.filter((p) => p.kind === 'full').map((p) => p.perSecond));
  const fullMs = median(passes.filter((p) => p.kind === 'full').map((p) => p.ms));

  // Request latency while a pass runs, against the same load while idle; the window ends before the pass does.
  const durationMs = Math.max(1000, Math.floor(fullMs * 0.8));
  const healthz = () => loadFromChild({ url: api.url, path: '/healthz', clients: LOAD_CLIENTS, warmupMs: 200, durationMs });
  // The event loop's own delay tells a loop held by the pass apart from a CPU shared with PostgreSQL.
  const loopDelay = async <T>(work: () => Promise<T>): Promise<{ result: T; p99Ms: number; maxMs: number }> => {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    const result = await work();
    histogram.disable();
    return { result, p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 };
  };
  const idleRun = await loopDelay(healthz);
  const busyPass = full();
  const busyRun = await loopDelay(healthz);
  const underLoad = await busyPass;
  const idle = idleRun.result;
  const busy = busyRun.result;
  const idleLatency: Distribution = distribution(idle.latenciesMs);
  const busyLatency: Distribution = distribution(busy.latenciesMs);

  const ratio = fullPerSecond / rawPerSecond;
  const p99Ratio = busyLatency.p99 / idleLatency.p99;
  const summary = {
    entries: ENTRIES,
    storedMB: storedBytes / 1e6,
    rawEntriesPerSecond: rawPerSecond,
    fullEntriesPerSecond: fullPerSecond,
    fullToRaw: ratio,
    fullPassSeconds: fullMs / 1000,
    fullUnderLoadEntriesPerSecond: underLoad.entries / (underLoad.ms / 1000),
    healthz: { idle: { ...idleLatency, rps: idle.requests / (idle.elapsedMs / 1000), errors: idle.requests - idle.ok }, duringFullPass: { ...busyLatency, rps: busy.requests / (busy.elapsedMs / 1000), errors: busy.requests - busy.ok } },
    p99Ratio,
    eventLoopDelayMs: { idle: { p99: idleRun.p99Ms, max: idleRun.maxMs }, duringFullPass: { p99: busyRun.p99Ms, max: busyRun.maxMs } },
    target: { fullToRawAtLeast: TARGET_RATIO },
    met: ratio >= TARGET_RATIO,
  };

  console.log(`\nfull /attest re-verification over ${ENTRIES} entries (${fixed(storedBytes / 1e6, 0)} MB stored), ${ROUNDS} rounds, medians\n`);
  console.log(
    table(
      ['pass', 'round', 'entries', 'seconds', 'entries/s'],
      passes.map((p) => [p.kind, String(p.round), String(p.entries), fixed(p.ms / 1000, 2), fixed(p.perSecond, 0)]),
    ),
  );
  console.log(`\nfull / raw sha256: ${fixed(ratio, 2)}x (goal >= ${TARGET_RATIO}x): ${summary.met ? 'met' : 'NOT met'}`);
  console.log(
    `\n${table(
      ['GET /healthz', '', 'req/s', 'p50 ms', 'p99 ms', 'max ms'],
      [
        ['idle', '', fixed(summary.healthz.idle.rps, 0), fixed(idleLatency.p50, 2), fixed(idleLatency.p99, 2), fixed(idleLatency.max, 1)],
        ['during a full pass', '', fixed(summary.healthz.duringFullPass.rps, 0), fixed(busyLatency.p50, 2), fixed(busyLatency.p99, 2), fixed(busyLatency.max, 1)],
      ],
    )}`,
  );
  console.log(
    `\nevent loop delay p99 / max: idle ${fixed(idleRun.p99Ms, 1)} / ${fixed(idleRun.maxMs, 1)} ms, during a full pass ${fixed(busyRun.p99Ms, 1)} / ${fixed(busyRun.maxMs, 1)} ms`,
  );
  console.log(`\np99 during / idle: ${fixed(p99Ratio, 2)}x; the pass under that load: ${fixed(summary.fullUnderLoadEntriesPerSecond, 0)} entries/s`);

  const dir = path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `attest-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const machine = { cpus: os.cpus().length, loadAverage, node: process.version };
  fs.writeFileSync(file, `${JSON.stringify({ startedAt: startedAt.toISOString(), settings: { entries: ENTRIES, rounds: ROUNDS, batch: FULL_PASS_BATCH, loadClients: LOAD_CLIENTS }, machine, passes, summary, ratios: { fullToRaw: ratio, healthzP99DuringOverIdle: p99Ratio }, goals: { fullToRaw: { atLeast: TARGET_RATIO } } }, null, 2)}\n`);
  console.log(`\nwritten to ${path.relative(ROOT, file)}`);
}

runBench('bench:attest', 45 * 60_000, main);
