/**
 * `npm run bench:transfer`: POST /api/v1/transfer of SOL through the whole action pipeline (HTTP, outbox
 * row, build, sign with the sealed custody key, store the signed bytes, send, confirm, ledger append,
 * reply) against the same SOL transfer built and signed with web3.js and sent and confirmed straight on the
 * same in-process chain, 16 concurrent clients each. The pipeline runs twice: each client on its own
 * citizen's wallet, and all 16 on one wallet. Rounds alternate; medians are reported, with ratios and a
 * per-stage breakdown of where a transfer's time goes (each stage timed by wrapping the running service's
 * outbox, vault, ledger writer and chain connection from here; nothing in the service changes).
 *
 * The service (startEmbedded: API, projector, workers, bundled chain) runs in this process on a fresh
 * PostgreSQL database and a fresh Redis prefix, both removed at the end; the clients share its event loop,
 * as the baseline's senders share the chain's. BENCH_SECONDS (5) measured per round after
 * BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (3). BENCH_RPC_DELAY_MS=40 puts both sides behind an RPC hop that answers
 * every call that much later, as a hosted RPC would. Writes .bench/transfer-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { recentBlockhash, rpcFetch, sendAndConfirm, signatureOf, type RecentBlockhash } from '@svc/chain';
import { REDIS_URL, freshDatabase, tempDir, testConfig } from '../test/support/env';
import { call } from '../test/support/http';
import { closeConnection } from '../test/support/localnet';
import { startEmbedded, type RunningServer } from './embedded';
import { deleteRedisKeys, runBench, type Cleanup } from './bench/cleanup';
import { runLoad } from './bench/load';
import { countPgSends } from './bench/pgSends';
import { delayServiceRpc } from './bench/rpcDelay';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { STAGE, breakdownOf, chainStages, instrumentPipeline, stagesOf, timeCalls, traces, type Trace } from './bench/transferTrace';
import { distribution, median, type Distribution } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = setting('BENCH_SECONDS', 5, 1);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const CLIENTS = 16;
const MAX_REQUESTS_PER_ROUND = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;
const STARTUP_TIMEOUT_MS = 90_000;
const FUND_SOL = 10;
/** BENCH_RPC_DELAY_MS=40: every RPC call of both sides answers that much later, as from a hosted RPC. */
const RPC_DELAY_MS = setting('BENCH_RPC_DELAY_MS', 0, 0);
const PATH = '/api/v1/transfer';

type Target = 'baseline' | 'pipeline' | 'pipeline, one wallet';
const TARGETS: Target[] = ['baseline', 'pipeline', 'pipeline, one wallet'];

// ---- the two sides ---------------------------------------------------------------------------------

interface RoundFigures {
  target: Target;
  round: number;
  ok: number;
  errorCount: number;
  errors: Record<string, number>;
  errorSamples: Record<string, string>;
  elapsedMs: number;
  tps: number;
  latencyMs: Distribution;
  /** How late the event loop (the service's, the chain's and the clients': one process) ran its callbacks. */
  loopDelayMs?: { p50: number; p99: number };
}

interface Citizen {
  handle: string;
  key: string;
  wallet: string;
}

async function register(base: string, handle: string): Promise<Citizen> {
  const res = await call(base, 'POST', '/api/v1/register', { body: { handle, model: 'bench' } });
  if (res.status !== 201) throw new Error(`register ${handle}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return { handle, key: res.body.api_key as string, wallet: res.body.agent.wallet as string };
}

async function airdrop(connection: Connection, wallet: PublicKey, sol: number): Promise<void> {
  const signature = await connection.requestAirdrop(wallet, sol * LAMPORTS_PER_SOL);
  await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) }, 'confirmed');
}

/** Every transfer moves a different number of lamports, so no two are the same transaction on one blockhash. */
function lamportCounter(): () => number {
  let next = 1_000;
  return () => next++;
}

async function pipelineRound(
  server: RunningServer,
  citizens: Citizen[],
  sink: Citizen,
  finished: Map<string, Trace>,
  lamports: () => number,
  round: number,
  target: Target,
): Promise<{ figures: RoundFigures; stages: Array<Map<string, number>> }> {
  const stages: Array<Map<string, number>> = [];
  const result = await runLoad({
    url: server.url,
    path: PATH,
    clients: CLIENTS,
    warmupMs: WARMUP_SECONDS * 1000,
    durationMs: SECONDS * 1000,
    maxRequests: MAX_REQUESTS_PER_ROUND,
    timeoutMs: REQUEST_TIMEOUT_MS,
    headers: (client) => ({ authorization: `Bearer ${citizens[target === 'pipeline' ? client : 0]!.key}` }),
    body: () => JSON.stringify({ to: sink.handle, amount: lamports() / LAMPORTS_PER_SOL }),
    check(_status, body, arrivedAt, measured, sentAt) {
      const reply = JSON.parse(body) as { executed?: boolean; signature?: string; ledger?: { seq?: number } | null };
      if (!reply.executed || !reply.signature) return 'not executed';
      if (typeof reply.ledger?.seq !== 'number') return 'no ledger.seq in the answer';
      const trace = finished.get(reply.signature);
      finished.delete(reply.signature);
      if (!trace) return 'no pipeline trace';
      if (measured) stages.push(stagesOf(trace, sentAt, arrivedAt));
      return undefined;
    },
  });
  finished.clear();
  const errorCount = Object.values(result.errors).reduce((a, b) => a + b, 0);
  const figures: RoundFigures = {
    target,
    round,
    ok: result.ok,
    errorCount,
    errors: result.errors,
    errorSamples: result.errorSamples,
    elapsedMs: result.elapsedMs,
    tps: (result.ok / result.elapsedMs) * 1000,
    latencyMs: distribution(result.latenciesMs),
  };
  return { figures, stages };
}

/** Transfers one after another, to count what each sends to PostgreSQL with nothing else in flight. */
const SEQUENTIAL_TRANSFERS = 50;

/**
 * PostgreSQL statements the whole process (API, projector, workers) sends per transfer, over transfers made one
 * after another, and the statements sent most: what each sequential round trip of a transfer is.
 */
async function statementsPerTransfer(server: RunningServer, from: Citizen, sink: Citizen, lamports: () => number): Promise<{ perTransfer: number; top: Array<{ text: string; perTransfer: number }> }> {
  const read = countPgSends();
  for (let i = 0; i < SEQUENTIAL_TRANSFERS; i++) {
    const res = await call(server.url, 'POST', PATH, { key: from.key, body: { to: sink.handle, amount: lamports() / LAMPORTS_PER_SOL } });
    if (res.status !== 200 || !res.body.executed) throw new Error(`sequential transfer: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }
  const sends = read();
  return {
    perTransfer: sends.queries / SEQUENTIAL_TRANSFERS,
    top: sends.statements.slice(0, 24).map((s) => ({ text: s.text, perTransfer: s.count / SEQUENTIAL_TRANSFERS })),
  };
}

/**
 * The same SOL transfer with nothing around it: each of the 16 senders builds it on a blockhash fetched once
 * a round, signs it with web3.js and sends and confirms it with the very call the pipeline uses.
 */
async function baselineRound(
  connection: Connection,
  senders: Keypair[],
  sink: PublicKey,
  lamports: () => number,
  round: number,
): Promise<{ figures: RoundFigures; stages: Array<Map<string, number>> }> {
  const recent: RecentBlockhash = await recentBlockhash(connection);
  const latencies: number[] = [];
  const stages: Array<Map<string, number>> = [];
  const errors: Record<string, number> = {};
  const errorSamples: Record<string, string> = {};
  let sent = 0;
  const measureFrom = performance.now() + WARMUP_SECONDS * 1000;
  const deadline = measureFrom + SECONDS * 1000;
  let lastAnswer = measureFrom;
  const transfer = async (payer: Keypair) => {
    const trace: Trace = { start: performance.now(), end: 0, spans: [] };
    await traces.run(trace, async () => {
      const instruction = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: sink, lamports: lamports() });
      const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: recent.blockhash, instructions: [instruction] });
      // web3.js's own signing (JavaScript ed25519), as a bare client signs; the service signs with node's.
      const transaction = new VersionedTransaction(message.compileToV0Message());
      transaction.sign([payer]);
      const signed = { signature: signatureOf(transaction), wire: transaction.serialize(), ...recent };
      trace.spans.push({ stage: STAGE.baselineSign, start: trace.start, end: performance.now() });
      await sendAndConfirm(connection, signed);
    });
    trace.end = performance.now();
    return trace;
  };
  await Promise.all(
    senders.map(async (payer) => {
      for (;;) {
        const now = performance.now();
        if (now >= deadline || sent >= MAX_REQUESTS_PER_ROUND) return;
        sent++;
        try {
          const trace = await transfer(payer);
          if (now < measureFrom) continue;
          lastAnswer = trace.end;
          latencies.push(trace.end - trace.start);
          stages.push(stagesOf(trace));
        } catch (error) {
          if (now < measureFrom) continue;
          lastAnswer = performance.now();
          const kind = error instanceof Error ? error.name : 'error';
          errors[kind] = (errors[kind] ?? 0) + 1;
          errorSamples[kind] ??= String(error instanceof Error ? error.message : error).slice(0, 300);
        }
      }
    }),
  );
  const elapsedMs = Math.max(lastAnswer - measureFrom, 1);
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  return {
    figures: { target: 'baseline', round, ok: latencies.length, errorCount, errors, errorSamples, elapsedMs, tps: (latencies.length / elapsedMs) * 1000, latencyMs: distribution(latencies) },
    stages,
  };
}

// ---- the run ---------------------------------------------------------------------------------------

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const loadAverage = os.loadavg().map((n) => Number(n.toFixed(2)));
  const dataDir = tempDir('bench-transfer');
  cleanup.add('remove the data directory', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const db = await freshDatabase('bench_transfer');
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const config = testConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    DATA_DIR: dataDir,
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_RPS: '1000000',
  });
  cleanup.add('delete the Redis keys', () => deleteRedisKeys(REDIS_URL, config.redisPrefix));

  process.stderr.write('starting the service (embedded, bundled chain) ... ');
  // The recovery pass would only find rows a failed request left; an hour keeps it out of the measurement.
  const server = await startEmbedded(config, { outboxRecoveryEveryMs: 3_600_000 });
  cleanup.add('stop the service', () => server.close());
  const { wsUrl } = server.services.chain.options;
  const rpcUrl = RPC_DELAY_MS > 0 ? await delayServiceRpc(server, RPC_DELAY_MS, cleanup) : server.services.chain.options.rpcUrl;
  // The baseline's own connection to the same chain, set up as the service's is (its transport too, so that the
  // ratio is the pipeline's cost, not a difference of HTTP clients).
  const direct = new Connection(rpcUrl, { commitment: 'confirmed', wsEndpoint: wsUrl, fetch: rpcFetch });
  cleanup.add('close the baseline connection', () => closeConnection(direct));

  const tag = randomBytes(3).toString('hex');
  const citizens = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => register(server.url, `bt${tag}_${i}`)));
  const sink = await register(server.url, `bt${tag}_sink`);
  const senders = Array.from({ length: CLIENTS }, () => Keypair.generate());
  await Promise.all([
    ...citizens.map((c) => airdrop(direct, new PublicKey(c.wallet), FUND_SOL)),
    ...senders.map((s) => airdrop(direct, s.publicKey, FUND_SOL)),
    // The recipient must be rent-exempt before a few thousand lamports can land on it.
    airdrop(direct, new PublicKey(sink.wallet), 1),
  ]);
  process.stderr.write(`ready; ${CLIENTS} citizens and ${CLIENTS} baseline senders funded with ${FUND_SOL} SOL each\n`);

  const finished = new Map<string, Trace>();
  instrumentPipeline(server, finished);
  timeCalls(direct, chainStages());

  const lamports = lamportCounter();
  const rounds: RoundFigures[] = [];
  const stagesByTarget: Record<Target, Array<Map<string, number>>> = { baseline: [], pipeline: [], 'pipeline, one wallet': [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of TARGETS) {
      process.stderr.write(`round ${round}/${ROUNDS}: ${target} (${WARMUP_SECONDS} s warm-up + ${SECONDS} s) ... `);
      // Every await of a transfer waits this long for its turn: most of the stages below that are not the work itself.
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const { figures, stages } =
        target === 'baseline'
          ? await baselineRound(direct, senders, new PublicKey(sink.wallet), lamports, round)
          : await pipelineRound(server, citizens, sink, finished, lamports, round, target);
      loop.disable();
      figures.loopDelayMs = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6 };
      rounds.push(figures);
      stagesByTarget[target].push(...stages);
      process.stderr.write(`${figures.tps.toFixed(0)} transfers/s, p50 ${fixed(figures.latencyMs.p50, 1)} ms, ${figures.errorCount} errors\n`);
    }
  }

  process.stderr.write(`${SEQUENTIAL_TRANSFERS} transfers one after another, counting PostgreSQL statements ...\n`);
  const statements = await statementsPerTransfer(server, citizens[0]!, sink, lamports);

  const summary = Object.fromEntries(
    TARGETS.map((target) => {
      const mine = rounds.filter((r) => r.target === target);
      return [
        target,
        {
          tps: median(mine.map((r) => r.tps)),
          p50Ms: median(mine.map((r) => r.latencyMs.p50)),
          p99Ms: median(mine.map((r) => r.latencyMs.p99)),
          errors: mine.reduce((sum, r) => sum + r.errorCount, 0),
        },
      ];
    }),
  ) as Record<Target, { tps: number; p50Ms: number; p99Ms: number; errors: number }>;
  const ratio = (target: Target) => ({
    p50: summary[target].p50Ms / summary.baseline.p50Ms,
    p99: summary[target].p99Ms / summary.baseline.p99Ms,
    tps: summary[target].tps / summary.baseline.tps,
  });
  const breakdowns = Object.fromEntries(TARGETS.map((target) => [target, breakdownOf(stagesByTarget[target])])) as Record<Target, ReturnType<typeof breakdownOf>>;

  const title =
    `SOL transfer, ${CLIENTS} concurrent clients: POST ${PATH} through the action pipeline against web3.js send-and-confirm straight ` +
    `to the same in-process chain; ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per round, ${ROUNDS} round(s) per target alternated; ` +
    `${RPC_DELAY_MS > 0 ? `every RPC call ${RPC_DELAY_MS} ms later (BENCH_RPC_DELAY_MS); ` : ''}` +
    `${os.cpus().length} CPUs, load average ${loadAverage.join(' ')} at start, node ${process.version}`;
  const loopOf = (r: RoundFigures) => (r.loopDelayMs ? `${fixed(r.loopDelayMs.p50, 1)} / ${fixed(r.loopDelayMs.p99, 1)}` : '');
  const rows = rounds.map((r) => [r.target, String(r.round), fixed(r.tps, 0), fixed(r.latencyMs.p50, 1), fixed(r.latencyMs.p99, 1), String(r.ok), String(r.errorCount), loopOf(r)]);
  for (const target of TARGETS) {
    const s = summary[target];
    rows.push([target, 'median', fixed(s.tps, 0), fixed(s.p50Ms, 1), fixed(s.p99Ms, 1), '', String(s.errors), '']);
  }
  const out = [title, '', table(['target', 'round', 'transfers/s', 'p50 ms', 'p99 ms', 'ok', 'errors', 'loop delay p50 / p99 ms'], rows), ''];
  for (const target of ['pipeline', 'pipeline, one wallet'] as const) {
    const r = ratio(target);
    out.push(`${target} / baseline: p50 ${fixed(r.p50, 2)}x   p99 ${fixed(r.p99, 2)}x   transfers/s ${fixed(r.tps, 2)}x`);
  }
  for (const target of TARGETS) {
    const { stages, totalMeanMs } = breakdowns[target];
    out.push(
      '',
      `where the time goes: ${target} (${stagesByTarget[target].length} measured transfers; share of the mean latency, ${fixed(totalMeanMs, 1)} ms)`,
      table(
        ['stage', '', 'median ms', 'mean ms', 'p99 ms', 'share'],
        stages.map((s) => [s.stage, '', fixed(s.medianMs, 2), fixed(s.meanMs, 2), fixed(s.p99Ms, 2), `${fixed(s.share * 100, 1)}%`]),
      ),
    );
  }
  out.push(
    '',
    `PostgreSQL statements per transfer, ${SEQUENTIAL_TRANSFERS} made one after another (the whole process: API, projector, workers): ${fixed(statements.perTransfer, 1)}`,
    table(['statement', 'per transfer'], statements.top.map((s) => [s.text, fixed(s.perTransfer, 2)])),
  );
  const errorLines = rounds.flatMap((r) => Object.entries(r.errors).map(([kind, n]) => `  ${r.target} round ${r.round}: ${n} x ${kind}: ${r.errorSamples[kind] ?? ''}`));
  if (errorLines.length) out.push('', 'errors:', ...errorLines);
  console.log(`\n${out.join('\n')}`);

  const dir = path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `transfer-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { clients: CLIENTS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, requestTimeoutMs: REQUEST_TIMEOUT_MS, path: PATH, rpcDelayMs: RPC_DELAY_MS };
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryBytes: os.totalmem(), node: process.version, platform: process.platform, loadAverage };
  const ratios = { pipeline: ratio('pipeline'), pipelineOneWallet: ratio('pipeline, one wallet') };
  // Issue 29's: at least half a bare send-and-confirm's throughput, at most twice its p50, in process and behind a delayed RPC.
  const goals = { 'pipeline.tps': { atLeast: 0.5 }, 'pipeline.p50': { atMost: 2 } };
  fs.writeFileSync(file, `${JSON.stringify({ startedAt: startedAt.toISOString(), settings, machine, rounds, summary, ratios, goals, breakdowns, statements }, null, 2)}\n`);
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = STARTUP_TIMEOUT_MS + ROUNDS * TARGETS.length * ((WARMUP_SECONDS + SECONDS) * 1000 + REQUEST_TIMEOUT_MS) + 60_000;
runBench('bench:transfer', limitMs, main);
