/**
 * `npm run bench:soak`: a society's mixed load held for minutes against the embedded service (API, projector,
 * workers, bundled chain, all in this process), with the buy alone measured before and after it in the same run.
 *
 * BENCH_SOAK_CLIENTS (16) clients, each on its own funded citizen, offer BENCH_SOAK_RPS (60) requests/s in all on
 * a fixed schedule (open loop: a slow answer does not slow the offer) for BENCH_SOAK_MINUTES (3) after
 * BENCH_SOAK_WARMUP_SECONDS (10): posts, replies, votes, the front page, search, pulse, curve buys, sells and SOL
 * transfers, drawn by weight (scripts/bench/soakMix.ts), every write with its own Idempotency-Key. Reported per
 * operation and per minute: count, p50, p99, 5xx, 4xx by code; per minute the process's RSS and event-loop delay.
 * Before and after the mix the same clients do only buys, closed loop, for BENCH_SECONDS (5) after
 * BENCH_WARMUP_SECONDS (1): 16 closed-loop clients keep the buy path saturated, so a second baseline offers buys
 * alone at the rate the mix offers them, open loop, for BENCH_SOAK_PACED_SECONDS (15). Goals: a buy under the mix at most 1.5x the buy alone at p50, no 5xx, RSS flat after
 * the first minute (last minute / first). BENCH_CPU_PROF=1 profiles the mix and prints where the CPU went;
 * BENCH_HEAP_PROF=1 samples the heap over the mix and prints where the memory still alive at its end was allocated.
 * BENCH_SOAK_LIVE_HEAP=1 makes a full collection at the end of each minute and reports the heap still in use after
 * it: whether the heap holds more each minute, or only reserves more.
 * BENCH_SOAK_CHAIN=child runs the bundled chain in a process of its own, so that the figures of this one (RSS, CPU,
 * loop delay, profiles) are the service's alone.
 * Writes .bench/soak-<timestamp>.json (and .cpuprofile / .heapprofile files under .bench/profiles/).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PG_ADMIN_URL } from '../test/support/env';
import { call } from '../test/support/http';
import { rssMbOf, startChainChild } from './bench/chainChild';
import { airdropper, register, type Citizen } from './bench/citizens';
import { runBench, type Cleanup } from './bench/cleanup';
import { CpuMeter } from './bench/cpuTime';
import { formatHeap, formatProfile, formatStretches, startCpuProfile, startHeapSampling, summarizeProfile } from './bench/cpuProfile';
import { startBenchService } from './bench/embeddedService';
import { runLoad } from './bench/load';
import { runPaced } from './bench/paced';
import { countPgSends } from './bench/pgSends';
import { machineNow, mediansOf, roundLine, roundOf, writeFigures, type TargetRound } from './bench/pairs';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { BUY_SHARE, BUY_SOL, OPERATIONS, Society, WEIGHTS } from './bench/soakMix';
import { ProcessSampler, SoakMeter, type CellFigures } from './bench/soakMeter';
import { distribution, seededRandom } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const MINUTES = setting('BENCH_SOAK_MINUTES', 3, 0.1);
const CLIENTS = Math.floor(setting('BENCH_SOAK_CLIENTS', 16, 1));
const RPS = setting('BENCH_SOAK_RPS', 60, 0.1);
const MIX_WARMUP_SECONDS = setting('BENCH_SOAK_WARMUP_SECONDS', 10, 0);
const BUY_SECONDS = setting('BENCH_SECONDS', 5, 1);
const BUY_WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const PACED_BUY_SECONDS = setting('BENCH_SOAK_PACED_SECONDS', 15, 1);
const CPU_PROFILE = process.env.BENCH_CPU_PROF === '1';
const HEAP_PROFILE = process.env.BENCH_HEAP_PROF === '1';
/** `child`: the bundled chain in its own process, so that this process's CPU and RSS are the service's alone. */
const CHAIN_IN_CHILD = process.env.BENCH_SOAK_CHAIN === 'child';
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_IN_FLIGHT_PER_CLIENT = 8;
const FUND_SOL = 20;
/** What each citizen buys before the mix, so that its first sells have tokens to sell. */
const FIRST_BUY_SOL = 0.02;
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const GOAL = { buyMixOverAloneP50: 1.5, serverErrors: 0, rssLastOverFirst: 1.1 };

type BuyTarget = 'buy alone, before' | 'buy alone, after';

async function write(base: string, citizen: Citizen, route: string, body: unknown, status = 200): Promise<Record<string, any>> {
  const res = await call(base, 'POST', route, { key: citizen.key, body, headers: { 'idempotency-key': randomBytes(12).toString('hex') } });
  if (res.status !== status) throw new Error(`${route} as ${citizen.handle}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any>;
}

const cellRow = (label: string, minute: string, f: CellFigures) => [
  label,
  minute,
  String(f.count),
  fixed(f.p50Ms, 1),
  fixed(f.p99Ms, 1),
  String(f.serverErrors),
  Object.entries(f.clientErrors).map(([code, n]) => `${n} x ${code}`).join(', '),
  Object.entries(f.otherErrors).map(([kind, n]) => `${n} x ${kind}`).join(', '),
];
const CELL_HEADER = ['operation', 'minute', 'count', 'p50 ms', 'p99 ms', '5xx', '4xx', 'other errors'];

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const machine = machineNow();
  const chain = CHAIN_IN_CHILD ? await startChainChild(cleanup, ROOT) : undefined;
  const server = await startBenchService(cleanup, 'soak', chain ? { SOLANA_RPC_URL: chain.url } : {});
  const airdrop = airdropper(server.services.chain.connection);
  const tag = randomBytes(3).toString('hex');
  const citizens = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => register(server.url, `bs${tag}_${i}`)));
  const sink = await register(server.url, `bs${tag}_sink`);
  const creator = await register(server.url, `bs${tag}_dev`);
  await Promise.all([...citizens.map((c) => airdrop(c.wallet, FUND_SOL)), airdrop(sink.wallet, 1), airdrop(creator.wallet, 2)]);
  const deployed = await write(server.url, creator, '/api/v1/tokens/deploy', { name: 'Soak Coin', symbol: 'SOAK', image: PNG }, 201);
  const mint = deployed.mint as string;
  const society = new Society(citizens, mint, sink, tag, seededRandom(29));
  await Promise.all(
    citizens.map(async (citizen, i) => {
      await write(server.url, citizen, '/api/v1/tokens/buy', { mint, amount_sol: FIRST_BUY_SOL });
      const first = await write(server.url, citizen, '/api/v1/posts', { body: `soak momentum opener ${i}`, mint, tags: ['soak'] }, 201);
      society.remember(first.post.id as string, i);
    }),
  );
  process.stderr.write(`ready; ${CLIENTS} citizens funded with ${FUND_SOL} SOL, each holding coin ${mint} and with a post\n`);

  let buys = 0;
  const buyAlone = async (target: BuyTarget): Promise<TargetRound<BuyTarget>> => {
    process.stderr.write(`${target} (${BUY_WARMUP_SECONDS} s warm-up + ${BUY_SECONDS} s, ${CLIENTS} clients, closed loop) ... `);
    const result = await runLoad({
      url: server.url,
      path: '/api/v1/tokens/buy',
      clients: CLIENTS,
      warmupMs: BUY_WARMUP_SECONDS * 1000,
      durationMs: BUY_SECONDS * 1000,
      maxRequests: 20_000,
      timeoutMs: REQUEST_TIMEOUT_MS,
      headers: (client) => ({ authorization: `Bearer ${citizens[client]!.key}`, 'idempotency-key': `soak-${tag}-alone-${++buys}` }),
      body: () => JSON.stringify({ mint, amount_sol: BUY_SOL }),
      check: (_status, body) => ((JSON.parse(body) as { executed?: boolean }).executed ? undefined : 'not executed'),
    });
    const figures = roundOf(target, target === 'buy alone, before' ? 1 : 2, result);
    process.stderr.write(roundLine(figures));
    return figures;
  };

  // The buy alone at the rate the mix offers buys: what a buy costs with nothing else running, not at saturation.
  const pacedRps = RPS * BUY_SHARE;
  const pacedBuys = async (label: string): Promise<CellFigures> => {
    process.stderr.write(`${label} (${BUY_WARMUP_SECONDS} s warm-up + ${PACED_BUY_SECONDS} s, ${fixed(pacedRps, 1)} buys/s offered, open loop) ... `);
    const start = performance.now();
    const buyMeter = new SoakMeter(start + BUY_WARMUP_SECONDS * 1000);
    await runPaced({
      url: server.url,
      clients: CLIENTS,
      rps: pacedRps,
      startAt: start,
      warmupMs: BUY_WARMUP_SECONDS * 1000,
      durationMs: PACED_BUY_SECONDS * 1000,
      timeoutMs: REQUEST_TIMEOUT_MS,
      maxInFlightPerClient: MAX_IN_FLIGHT_PER_CLIENT,
      next: (client) => society.next(client, 'buy'),
      judge: (request, client, body) => society.judge(request, client, body),
      meter: buyMeter,
    });
    const figures = buyMeter.figures('buy', undefined);
    process.stderr.write(`p50 ${fixed(figures.p50Ms, 1)} ms, p99 ${fixed(figures.p99Ms, 1)} ms, ${figures.count - figures.ok} errors\n`);
    return figures;
  };

  const alone: TargetRound<BuyTarget>[] = [await buyAlone('buy alone, before')];
  const pacedAlone = [await pacedBuys('buy alone at the mix rate, before')];

  process.stderr.write(`mix: ${CLIENTS} clients offering ${RPS} requests/s for ${MIX_WARMUP_SECONDS} s warm-up + ${MINUTES} min ... `);
  const startAt = performance.now();
  const measureFrom = startAt + MIX_WARMUP_SECONDS * 1000;
  const meter = new SoakMeter(measureFrom);
  const sampler = new ProcessSampler(measureFrom);
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  // PostgreSQL shares the machine's cores with this process: its backends' CPU says how close the machine is to full.
  const cpuMeter = new CpuMeter(PG_ADMIN_URL);
  await cpuMeter.start();
  cleanup.add('close the CPU meter', () => cpuMeter.close());
  const database = new URL(server.services.config.databaseUrl!).pathname.slice(1);
  const endCpu = await cpuMeter.begin({ service: process.pid, ...(chain ? { chain: chain.pid } : {}) }, [database]);
  const chainRssMb = chain ? [rssMbOf(chain.pid)] : [];
  const pgSends = countPgSends();
  const stopProfile = CPU_PROFILE ? await startCpuProfile(path.join(ROOT, '.bench', 'profiles', `soak-${stamp}.cpuprofile`)) : undefined;
  const stopHeap = HEAP_PROFILE ? await startHeapSampling(path.join(ROOT, '.bench', 'profiles', `soak-${stamp}.heapprofile`)) : undefined;
  // The sampler stops when the measured stretch ends, not when its last answers come in.
  let processMinutes = [] as ReturnType<ProcessSampler['stop']>;
  const stopSampler = setTimeout(() => (processMinutes = sampler.stop()), measureFrom + MINUTES * 60_000 - performance.now());
  const paced = await runPaced({
    url: server.url,
    clients: CLIENTS,
    rps: RPS,
    startAt,
    warmupMs: MIX_WARMUP_SECONDS * 1000,
    durationMs: MINUTES * 60_000,
    timeoutMs: REQUEST_TIMEOUT_MS,
    maxInFlightPerClient: MAX_IN_FLIGHT_PER_CLIENT,
    next: (client) => society.next(client),
    judge: (request, client, body) => society.judge(request, client, body),
    meter,
  });
  const profileFile = await stopProfile?.();
  const heap = await stopHeap?.();
  const mixWallMs = performance.now() - startAt;
  const cpuMs = await endCpu();
  if (chain) chainRssMb.push(rssMbOf(chain.pid));
  const cpuPercent = Object.fromEntries(Object.entries(cpuMs).map(([part, ms]) => [part.replace(` ${database}`, ''), (ms / mixWallMs) * 100]));
  const sends = pgSends();
  clearTimeout(stopSampler);
  if (processMinutes.length === 0) processMinutes = sampler.stop();
  process.stderr.write(`${paced.sent} sent\n`);

  pacedAlone.push(await pacedBuys('buy alone at the mix rate, after'));
  alone.push(await buyAlone('buy alone, after'));

  // ---- figures ----
  const minutes = meter.cells.map((_, m) => m);
  const byOperation = Object.fromEntries(OPERATIONS.map((op) => [op, meter.figures(op, undefined)]));
  const perMinute = minutes.map((m) => ({
    minute: m + 1,
    all: meter.figures(undefined, m),
    operations: Object.fromEntries(OPERATIONS.map((op) => [op, meter.figures(op, m)])),
    process: processMinutes[m],
    skippedTurns: paced.skippedByMinute[m] ?? 0,
  }));
  const aloneMedians = mediansOf(alone, ['buy alone, before', 'buy alone, after']);
  const aloneP50 = (aloneMedians['buy alone, before'].p50Ms + aloneMedians['buy alone, after'].p50Ms) / 2;
  const aloneP99 = (aloneMedians['buy alone, before'].p99Ms + aloneMedians['buy alone, after'].p99Ms) / 2;
  const buyMix = byOperation.buy!;
  const all = meter.figures(undefined, undefined);
  const first = processMinutes[0];
  const last = processMinutes[processMinutes.length - 1];
  const pacedP50 = (pacedAlone[0]!.p50Ms + pacedAlone[1]!.p50Ms) / 2;
  const pacedP99 = (pacedAlone[0]!.p99Ms + pacedAlone[1]!.p99Ms) / 2;
  const ratios = {
    buyMixOverAlone: { p50: buyMix.p50Ms / aloneP50, p99: buyMix.p99Ms / aloneP99 },
    buyMixOverAloneAtMixRate: { p50: buyMix.p50Ms / pacedP50, p99: buyMix.p99Ms / pacedP99 },
    rssLastOverFirstMinute: last && first ? last.rssMeanMb / first.rssMeanMb : Number.NaN,
    ...(last?.liveHeapMb !== undefined && first?.liveHeapMb !== undefined ? { liveHeapLastOverFirstMinute: last.liveHeapMb / first.liveHeapMb } : {}),
    achievedOverOfferedRps: all.count / (MINUTES * 60) / RPS,
  };
  // A count, not a ratio: bench:summary shows it as a plain figure.
  const measures = { serverErrors: all.serverErrors };
  const lateness = distribution(paced.turnLatenessMs);

  // ---- report ----
  const title =
    `society mix: ${CLIENTS} clients offering ${RPS} requests/s (open loop) for ${MINUTES} min after ${MIX_WARMUP_SECONDS} s, ` +
    `against the embedded service on the bundled chain${chain ? ' (in its own process)' : ''}, with the buy alone (${CLIENTS} clients, closed loop, ${BUY_SECONDS} s) before and after; ` +
    `${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')}, node ${process.version}`;
  const weights = OPERATIONS.map((op) => `${op} ${WEIGHTS[op]}`).join(', ');
  const out = [
    title,
    `weights: ${weights}`,
    '',
    'whole mix, by operation:',
    table(CELL_HEADER, [...OPERATIONS.map((op) => cellRow(op, 'all', byOperation[op]!)), cellRow('all', 'all', all)]),
    '',
    'by minute:',
    table(CELL_HEADER, perMinute.flatMap((m) => [...OPERATIONS.map((op) => cellRow(op, String(m.minute), m.operations[op]!)), cellRow('all', String(m.minute), m.all)])),
    '',
    'the process, by minute:',
    table(
      ['minute', '', 'req/s', 'CPU %', 'RSS mean MB', 'RSS max MB', 'heap reserved MB', 'heap used MB', 'live heap MB', 'external MB', 'loop delay p99 ms', 'loop delay max ms', 'skipped turns'],
      perMinute.map((m) => [
        String(m.minute),
        '',
        fixed(m.all.count / 60, 1),
        fixed(m.process?.cpuPercent ?? Number.NaN, 0),
        fixed(m.process?.rssMeanMb ?? Number.NaN, 0),
        fixed(m.process?.rssMaxMb ?? Number.NaN, 0),
        fixed(m.process?.heapTotalMb ?? Number.NaN, 0),
        fixed(m.process?.heapUsedMb ?? Number.NaN, 0),
        m.process?.liveHeapMb === undefined ? '' : fixed(m.process.liveHeapMb, 0),
        fixed(m.process?.externalMb ?? Number.NaN, 0),
        fixed(m.process?.eventLoopDelayP99Ms ?? Number.NaN, 1),
        fixed(m.process?.eventLoopDelayMaxMs ?? Number.NaN, 1),
        String(m.skippedTurns),
      ]),
    ),
    `turns fired late against the schedule: p50 ${fixed(lateness.p50, 1)} ms, p99 ${fixed(lateness.p99, 1)} ms (timers share the service's event loop)`,
    '',
    table(
      ['buy', '', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
      [
        ...alone.map((r) => [`${r.target} (closed loop)`, '', fixed(r.tps, 0), fixed(r.latencyMs.p50, 1), fixed(r.latencyMs.p99, 1), String(r.errorCount)]),
        ...pacedAlone.map((f, i) => [`buy alone at the mix rate, ${i ? 'after' : 'before'}`, '', fixed(f.count / PACED_BUY_SECONDS, 1), fixed(f.p50Ms, 1), fixed(f.p99Ms, 1), String(f.count - f.ok)]),
        ['buy under the mix', '', fixed(buyMix.count / (MINUTES * 60), 1), fixed(buyMix.p50Ms, 1), fixed(buyMix.p99Ms, 1), String(buyMix.count - buyMix.ok)],
      ],
    ),
    '',
    `buy under the mix / buy alone (closed loop): p50 ${fixed(ratios.buyMixOverAlone.p50, 2)}x   p99 ${fixed(ratios.buyMixOverAlone.p99, 2)}x (goal: p50 at most ${GOAL.buyMixOverAloneP50}x)`,
    `buy under the mix / buy alone at the mix's buy rate: p50 ${fixed(ratios.buyMixOverAloneAtMixRate.p50, 2)}x   p99 ${fixed(ratios.buyMixOverAloneAtMixRate.p99, 2)}x (what the rest of the mix costs a buy)`,
    `5xx answers: ${measures.serverErrors} (goal: ${GOAL.serverErrors})`,
    `RSS last minute / first minute: ${fixed(ratios.rssLastOverFirstMinute, 2)}x (goal: flat, at most ${GOAL.rssLastOverFirst}x)`,
    ...(ratios.liveHeapLastOverFirstMinute === undefined ? [] : [`live heap after a full collection, last minute / first: ${fixed(ratios.liveHeapLastOverFirstMinute, 2)}x`]),
    `answered / offered requests: ${fixed(ratios.achievedOverOfferedRps, 2)}x`,
    `CPU during the mix (warm-up included), % of one core: ${Object.entries(cpuPercent).map(([part, pct]) => `${part} ${fixed(pct, 0)}%`).join(', ')} ` +
      `of the machine's ${machine.cpus * 100}%`,
    ...(chain ? [`the chain's own process: RSS ${fixed(chainRssMb[0]!, 0)} MB when the mix began, ${fixed(chainRssMb[1]!, 0)} MB when it ended`] : []),
    `PostgreSQL queries sent during the mix (warm-up included): ${sends.queries}, ${fixed(sends.queries / paced.sent, 1)} per request; ` +
      `their synchronous send ${fixed(sends.syncMs / 1000, 1)} s in all, ${fixed((sends.syncMs / sends.queries) * 1000, 0)} µs each, ` +
      `${fixed((sends.syncMs / mixWallMs) * 100, 1)}% of the event loop's time; the statements sent most, per request:`,
    ...sends.statements.slice(0, 15).map((st) => `  ${fixed(st.count / paced.sent, 2).padStart(6)}  ${st.text}`),
  ];
  const samples = Object.entries(meter.samples());
  if (samples.length) out.push('', 'first answer of each error:', ...samples.map(([label, text]) => `  ${label}: ${text}`));
  console.log(`\n${out.join('\n')}`);
  if (profileFile) {
    const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
    console.log(`\n${formatProfile(summarizeProfile(profile), 15)}\n\n${formatStretches(profile, 5, 8)}`);
    console.log(`\nprofile written to ${path.relative(process.cwd(), profileFile)}`);
  }
  if (heap) console.log(`\n${formatHeap(heap, 15)}`);
  const file = writeFigures(ROOT, 'soak', startedAt, {
    settings: { chainInChild: CHAIN_IN_CHILD, clients: CLIENTS, rps: RPS, minutes: MINUTES, warmupSeconds: MIX_WARMUP_SECONDS, buySeconds: BUY_SECONDS, weights, maxInFlightPerClient: MAX_IN_FLIGHT_PER_CLIENT },
    machine,
    goal: GOAL,
    buyAlone: alone,
    buyAloneAtMixRate: { buysPerSecond: pacedRps, seconds: PACED_BUY_SECONDS, rounds: pacedAlone },
    byOperation,
    perMinute,
    turnLatenessMs: lateness,
    cpuPercent,
    chainProcessRssMb: chain ? { start: chainRssMb[0], end: chainRssMb[1] } : undefined,
    pgSends: { ...sends, statements: sends.statements.slice(0, 40), perRequest: sends.queries / paced.sent, shareOfLoop: sends.syncMs / mixWallMs },
    ratios,
    measures,
    goals: {
      'buyMixOverAlone.p50': { atMost: GOAL.buyMixOverAloneP50 },
      serverErrors: { atMost: GOAL.serverErrors },
      rssLastOverFirstMinute: { atMost: GOAL.rssLastOverFirst },
    },
  });
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = 180_000 + 2 * ((2 * BUY_WARMUP_SECONDS + BUY_SECONDS + PACED_BUY_SECONDS) * 1000 + 2 * REQUEST_TIMEOUT_MS) + (MIX_WARMUP_SECONDS + MINUTES * 60) * 1000 + REQUEST_TIMEOUT_MS + 60_000;
runBench('bench:soak', limitMs, main);
