/**
 * `npm run bench:buy`: POST /api/v1/tokens/buy of a coin on its pump bonding curve, end to end over HTTP (venue
 * detection, the SDK's quote, the build, the pipeline's outbox, custody signature, send, confirm, ledger
 * append), against POST /api/v1/transfer of SOL through the same pipeline in the same run, 16 concurrent
 * clients each on its own citizen. Rounds alternate; medians of p50, p99 and requests/s are reported with the
 * buy/transfer ratios (the goal: a buy's p50 at most 1.2x a transfer's), and this process's CPU per request. A third round buys as 16
 * other citizens whose spending policy caps each trade and the day, so every buy is checked and reserved against
 * the day cap at the ledger head: its ratio to the plain buy is what the policy check costs.
 *
 * The service (startEmbedded: API, projector, workers, bundled chain) runs in this process on a fresh
 * PostgreSQL database and Redis prefix, both removed at the end. BENCH_SECONDS (5) measured per round after
 * BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (3). BENCH_RPC_DELAY_MS=40 puts the service behind an RPC hop that answers
 * every call that much later, as a hosted RPC would (subscriptions still go straight). BENCH_BUY_CHAIN=child runs
 * the bundled chain in a process of its own, so that the curve program's emulation does not share the service's
 * event loop, as no real chain would. BENCH_CPU_PROF=1 profiles each target's first round on its own and
 * prints where the CPU of a transfer and of a buy went. Writes .bench/buy-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LAMPORTS_PER_SOL } from '@solana/web3.js';
import { call } from '../test/support/http';
import { airdropper, register } from './bench/citizens';
import { runBench, type Cleanup } from './bench/cleanup';
import { formatProfile, startCpuProfile, summarizeProfile } from './bench/cpuProfile';
import { startChainChild } from './bench/chainChild';
import { startBenchService } from './bench/embeddedService';
import { delayServiceRpc } from './bench/rpcDelay';
import { runLoad } from './bench/load';
import { machineNow, mediansOf, ratioOf, roundLine, roundOf, roundsReport, writeFigures, type TargetRound } from './bench/pairs';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { median } from './bench/stats';
import { breakdownOf, instrumentPipeline, stagesOf, type Trace } from './bench/transferTrace';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = setting('BENCH_SECONDS', 5, 1);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const CLIENTS = 16;
const MAX_REQUESTS_PER_ROUND = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;
const FUND_SOL = 20;
/** Small enough that every round of every client together stays far from completing the curve (about 85 SOL). */
const BUY_SOL = 0.0005;
const CPU_PROFILE = process.env.BENCH_CPU_PROF === '1';
/** BENCH_RPC_DELAY_MS=40: every RPC call of the service answers that much later, as from a hosted RPC. */
const RPC_DELAY_MS = setting('BENCH_RPC_DELAY_MS', 0, 0);
const CHAIN_IN_CHILD = process.env.BENCH_BUY_CHAIN === 'child';
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

type Target = 'transfer' | 'buy' | 'buy_policy';
const TARGETS: Target[] = ['transfer', 'buy', 'buy_policy'];
/** Rules every policy-round buy meets and passes: the check and the day-cap reservation are made, nothing refused. */
const POLICY = { max_sol_per_trade: 1, max_sol_per_day: 10_000 };

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const machine = machineNow();
  const chain = CHAIN_IN_CHILD ? await startChainChild(cleanup, ROOT) : undefined;
  const server = await startBenchService(cleanup, 'buy', chain ? { SOLANA_RPC_URL: chain.url } : {});
  if (RPC_DELAY_MS > 0) await delayServiceRpc(server, RPC_DELAY_MS, cleanup);
  const airdrop = airdropper(server.services.chain.connection);
  const tag = randomBytes(3).toString('hex');
  const citizens = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => register(server.url, `bb${tag}_${i}`)));
  const capped = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => register(server.url, `bp${tag}_${i}`)));
  for (const citizen of capped) {
    const set = await call(server.url, 'PUT', '/api/v1/policy', { key: citizen.key, body: POLICY });
    if (set.status !== 200) throw new Error(`policy ${citizen.handle}: HTTP ${set.status} ${JSON.stringify(set.body)}`);
  }
  const sink = await register(server.url, `bb${tag}_sink`);
  const creator = await register(server.url, `bb${tag}_dev`);
  await Promise.all([...[...citizens, ...capped].map((c) => airdrop(c.wallet, FUND_SOL)), airdrop(sink.wallet, 1), airdrop(creator.wallet, 2)]);
  const deployed = await call(server.url, 'POST', '/api/v1/tokens/deploy', { key: creator.key, body: { name: 'Bench Coin', symbol: 'BENCH', image: PNG } });
  if (deployed.status !== 201) throw new Error(`deploy: HTTP ${deployed.status} ${JSON.stringify(deployed.body)}`);
  const mint = deployed.body.mint as string;
  process.stderr.write(`ready; ${CLIENTS} citizens funded with ${FUND_SOL} SOL, coin ${mint} on its curve\n`);

  let lamports = 1_000;
  const rounds: TargetRound<Target>[] = [];
  // Where a buy's time goes next to a transfer's: the same stage traces as bench:transfer.
  const finished = new Map<string, Trace>();
  instrumentPipeline(server, finished);
  const stagesByTarget: Record<Target, Array<Map<string, number>>> = { transfer: [], buy: [], buy_policy: [] };
  const profiles: string[] = [];
  // CPU per request holds up better than rates on a noisy machine: a small saving shows here before it shows in p50.
  const cpuByTarget: Record<Target, number[]> = { transfer: [], buy: [], buy_policy: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of TARGETS) {
      process.stderr.write(`round ${round}/${ROUNDS}: ${target} (${WARMUP_SECONDS} s warm-up + ${SECONDS} s) ... `);
      const cpuBefore = process.cpuUsage();
      const profiled = CPU_PROFILE && round === 1 && target !== 'buy_policy';
      const stopProfile = profiled ? await startCpuProfile(path.join(ROOT, '.bench', 'profiles', `buy-${startedAt.toISOString().replace(/[:.]/g, '-')}-${target}.cpuprofile`)) : undefined;
      const result = await runLoad({
        url: server.url,
        path: target === 'transfer' ? '/api/v1/transfer' : '/api/v1/tokens/buy',
        clients: CLIENTS,
        warmupMs: WARMUP_SECONDS * 1000,
        durationMs: SECONDS * 1000,
        maxRequests: MAX_REQUESTS_PER_ROUND,
        timeoutMs: REQUEST_TIMEOUT_MS,
        headers: (client) => ({ authorization: `Bearer ${(target === 'buy_policy' ? capped : citizens)[client]!.key}` }),
        body: () =>
          JSON.stringify(target === 'transfer' ? { to: sink.handle, amount: lamports++ / LAMPORTS_PER_SOL } : { mint, amount_sol: BUY_SOL }),
        check(_status, body, arrivedAt, measured, sentAt) {
          const reply = JSON.parse(body) as { executed?: boolean; signature?: string; venue?: string };
          if (!reply.executed || !reply.signature) return 'not executed';
          if (target !== 'transfer' && reply.venue !== 'pump') return `venue ${reply.venue}`;
          const trace = finished.get(reply.signature);
          finished.delete(reply.signature);
          if (trace && measured) stagesByTarget[target].push(stagesOf(trace, sentAt, arrivedAt));
          return undefined;
        },
      });
      const cpu = process.cpuUsage(cpuBefore);
      if (result.sent > 0) cpuByTarget[target].push((cpu.user + cpu.system) / 1000 / result.sent);
      const profileFile = await stopProfile?.();
      if (profileFile) {
        const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
        profiles.push(`${target}, round 1 (warm-up included), ${result.ok} answered: ${formatProfile(summarizeProfile(profile), 15)}`);
      }
      const figures = roundOf(target, round, result);
      rounds.push(figures);
      process.stderr.write(roundLine(figures));
    }
  }

  const summary = mediansOf(rounds, TARGETS);
  const ratios = ratioOf(summary.buy, summary.transfer);
  const policyRatios = ratioOf(summary.buy_policy, summary.buy);
  const title =
    `curve buy vs SOL transfer, ${CLIENTS} concurrent clients, both end to end over HTTP through the action pipeline on the bundled chain${CHAIN_IN_CHILD ? ' in a process of its own' : ''}; ` +
    `${RPC_DELAY_MS > 0 ? `every RPC call ${RPC_DELAY_MS} ms later (BENCH_RPC_DELAY_MS); ` : ''}` +
    `${WARMUP_SECONDS} s warm-up + ${SECONDS} s per round, ${ROUNDS} round(s) alternated; ${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')}, node ${process.version}`;
  const verdict = `buy / transfer: p50 ${fixed(ratios.p50, 2)}x   p99 ${fixed(ratios.p99, 2)}x   req/s ${fixed(ratios.tps, 2)}x (goal: p50 at most 1.2x)`;
  const policyVerdict = `buy with a policy / without: p50 ${fixed(policyRatios.p50, 2)}x   p99 ${fixed(policyRatios.p99, 2)}x   req/s ${fixed(policyRatios.tps, 2)}x (what the policy check and day-cap reservation cost a buy)`;
  const cpuMs = Object.fromEntries(TARGETS.map((target) => [target, median(cpuByTarget[target])])) as Record<Target, number>;
  const cpuVerdict =
    `CPU of this process per request sent, warm-up included (service${CHAIN_IN_CHILD ? '' : ', bundled chain'}${RPC_DELAY_MS > 0 ? ', delayed RPC hop' : ''} and clients), median of rounds: ` +
    `transfer ${fixed(cpuMs.transfer, 2)} ms, buy ${fixed(cpuMs.buy, 2)} ms, buy / transfer ${fixed(cpuMs.buy / cpuMs.transfer, 2)}x`;
  const breakdowns = Object.fromEntries(TARGETS.map((target) => [target, breakdownOf(stagesByTarget[target])])) as Record<Target, ReturnType<typeof breakdownOf>>;
  const where = (['transfer', 'buy'] as const).flatMap((target) => [
    '',
    `where the time goes: ${target} (${stagesByTarget[target].length} measured; share of the mean latency, ${fixed(breakdowns[target].totalMeanMs, 1)} ms)`,
    table(
      ['stage', 'median ms', 'mean ms', 'p99 ms', 'share'],
      breakdowns[target].stages.map((s) => [s.stage, fixed(s.medianMs, 2), fixed(s.meanMs, 2), fixed(s.p99Ms, 2), `${fixed(s.share * 100, 1)}%`]),
    ),
  ]);
  console.log(`\n${[title, '', ...roundsReport(rounds, TARGETS, summary), '', verdict, policyVerdict, cpuVerdict, ...where].join('\n')}`);
  for (const profile of profiles) console.log(`\n${profile}`);
  const file = writeFigures(ROOT, 'buy', startedAt, {
    settings: { clients: CLIENTS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, buySol: BUY_SOL, policy: POLICY, rpcDelayMs: RPC_DELAY_MS, chainInChild: CHAIN_IN_CHILD },
    machine,
    rounds,
    summary,
    ratios,
    goals: { p50: { atMost: 1.2 } },
    policyRatios,
    cpuMsPerRequest: cpuMs,
    breakdowns,
  });
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = 90_000 + ROUNDS * TARGETS.length * ((WARMUP_SECONDS + SECONDS) * 1000 + REQUEST_TIMEOUT_MS) + 60_000;
runBench('bench:buy', limitMs, main);
