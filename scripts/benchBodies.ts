/**
 * `npm run bench:bodies`: what a hostile 6 MB body costs everyone else. The API runs in this process and
 * measures its own event-loop delay (perf_hooks monitorEventLoopDelay); the clients run on a worker thread, so
 * their own work does not show up as the server's delay. Three phases of BENCH_SECONDS (8) each:
 *   idle: a prober GETs /healthz back to back, nothing else;
 *   deep: the prober, plus two clients looping POST /api/v1/register with a body nested ~3,000,000 levels;
 *   wide: the prober, plus two clients looping the same route with a flat body of ~1.5M array items.
 * Every figure is also given as a ratio against the idle phase of the same run, since the machine varies.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startServer } from '../apps/api/src/server';
import { freshDatabase, REDIS_URL, tempDir, testConfig } from '../test/support/env';
import { distribution, type Distribution } from './bench/stats';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BODY_BYTES = 6 * 1024 * 1024 - 64;

function deepBody(): string {
  // An object at the top, so that the body reaches validation, as a register body would.
  const head = '{"handle":"!","model":"m","pad":';
  const levels = (BODY_BYTES - head.length - 1) >> 1;
  return `${head}${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

function wideBody(): string {
  // An invalid handle, so each request is refused after the whole body was walked, and nothing is written.
  const head = '{"handle":"!","model":"m","pad":[';
  const items = Math.floor((BODY_BYTES - head.length - 2) / 4);
  return `${head}${'"a",'.repeat(items - 1)}"a"]}`;
}

/**
 * The clients, in plain JavaScript so a worker needs no loader. The prober and the posters run on separate
 * workers, so that the prober's latency is the server's and not its own thread's, busy sending 6 MB bodies.
 */
const CLIENTS = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, body, loopers, ms } = workerData;
const until = Date.now() + ms;
const probes = [];
const answers = [];
const statuses = {};
async function probe() {
  while (Date.now() < until) {
    const started = performance.now();
    await (await fetch(url + '/healthz')).arrayBuffer();
    probes.push(performance.now() - started);
  }
}
async function loop() {
  while (Date.now() < until) {
    const started = performance.now();
    const res = await fetch(url + '/api/v1/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await res.text();
    answers.push(performance.now() - started);
    const key = res.status + ' ' + (text.match(/"code":"(\\w+)"/)?.[1] ?? '');
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
}
const work = loopers > 0 ? Array.from({ length: loopers }, loop) : [probe()];
Promise.all(work).then(() => parentPort.postMessage({ probes, answers, statuses }));
`;

interface Measured {
  probes: number[];
  answers: number[];
  statuses: Record<string, number>;
}

function clients(url: string, body: string, loopers: number): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENTS, { eval: true, workerData: { url, body, loopers, ms: SECONDS * 1000 } });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

interface PhaseResult {
  phase: string;
  healthzMs: Distribution;
  answerMs: Distribution;
  statuses: Record<string, number>;
  loopDelayMs: { p50: number; p99: number; max: number };
}

async function phase(name: string, url: string, body: string | undefined): Promise<PhaseResult> {
  const delay = monitorEventLoopDelay({ resolution: 2 });
  delay.enable();
  const [prober, posters] = await Promise.all([clients(url, '', 0), body ? clients(url, body, 2) : undefined]);
  const result = { probes: prober.probes, answers: posters?.answers ?? [], statuses: posters?.statuses ?? {} };
  delay.disable();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  return {
    phase: name,
    healthzMs: distribution(result.probes),
    answerMs: distribution(result.answers),
    statuses: result.statuses,
    loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const db = await freshDatabase('bench_bodies');
  const api = await startServer(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('bench-bodies') }));
  try {
    const results = [await phase('idle', api.url, undefined), await phase('deep', api.url, deepBody()), await phase('wide', api.url, wideBody())];
    const idle = results[0]!;
    for (const r of results) {
      console.log(
        [
          `${r.phase.padEnd(5)}`,
          `/healthz p50 ${round(r.healthzMs.p50)} ms (${round(r.healthzMs.p50 / idle.healthzMs.p50)}x idle), p99 ${round(r.healthzMs.p99)} ms (${round(r.healthzMs.p99 / idle.healthzMs.p99)}x)`,
          `loop delay p50 ${r.loopDelayMs.p50} ms, p99 ${r.loopDelayMs.p99} ms (${round(r.loopDelayMs.p99 / idle.loopDelayMs.p99)}x idle), max ${r.loopDelayMs.max} ms`,
          r.answerMs.count ? `6 MB body answered in p50 ${round(r.answerMs.p50)} ms, max ${round(r.answerMs.max)} ms (${r.answerMs.count} sent: ${JSON.stringify(r.statuses)})` : '',
        ]
          .filter(Boolean)
          .join('\n      '),
      );
    }
  } finally {
    await api.close();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
