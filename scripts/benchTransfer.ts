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
 * BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (3). Writes .bench/transfer-<timestamp>.json.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import type { PipelineDeps } from '@svc/actions';
import { recentBlockhash, sendAndConfirm, signTransaction, type RecentBlockhash } from '@svc/chain';
import { REDIS_URL, freshDatabase, tempDir, testConfig } from '../test/support/env';
import { call } from '../test/support/http';
import { closeConnection } from '../test/support/localnet';
import { startEmbedded, type RunningServer } from './embedded';
import { deleteRedisKeys, runBench, type Cleanup } from './bench/cleanup';
import { runLoad } from './bench/load';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { distribution, median, percentile, type Distribution } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = setting('BENCH_SECONDS', 5, 1);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const CLIENTS = 16;
const MAX_REQUESTS_PER_ROUND = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;
const STARTUP_TIMEOUT_MS = 90_000;
const FUND_SOL = 10;
const PATH = '/api/v1/transfer';

type Target = 'baseline' | 'pipeline' | 'pipeline, one wallet';
const TARGETS: Target[] = ['baseline', 'pipeline', 'pipeline, one wallet'];

// ---- where the time goes ---------------------------------------------------------------------------

interface Span {
  stage: string;
  start: number;
  end: number;
}

/** One transfer's timeline: from its entry into the pipeline (or the baseline's first step) to its end. */
interface Trace {
  start: number;
  end: number;
  spans: Span[];
}

const traces = new AsyncLocalStorage<Trace>();

/**
 * Replaces each named async method of `target` with one that records how long it took into the trace of
 * the transfer that called it; a call outside a traced transfer passes straight through.
 */
function timeCalls(target: object, stages: Record<string, string>): void {
  const methods = target as Record<string, (...args: unknown[]) => unknown>;
  for (const [method, stage] of Object.entries(stages)) {
    const original = methods[method];
    if (typeof original !== 'function') throw new Error(`cannot time ${method}: not a method`);
    methods[method] = function (this: unknown, ...args: unknown[]) {
      const trace = traces.getStore();
      if (!trace) return original.apply(this, args);
      const start = performance.now();
      return Promise.resolve(original.apply(this, args)).finally(() => trace.spans.push({ stage, start, end: performance.now() }));
    };
  }
}

const STAGE = {
  httpIn: 'HTTP in: parse, auth, validate, plan the transfer',
  reserve: 'outbox: reserve the row (INSERT)',
  blockhash: 'chain: getLatestBlockhash',
  build: 'build + compile the v0 message',
  fee: 'chain: getFeeForMessage',
  funds: 'chain: funds check (getBalance + getMinimumBalanceForRentExemption)',
  custody: 'vault: unseal the custody key',
  sign: 'sign: keypair from secret, ed25519, message hash',
  markSigned: 'outbox: store the signed bytes (UPDATE)',
  reread: 'outbox: read the row back (SELECT)',
  send: 'chain: sendTransaction (with preflight)',
  confirm: 'chain: confirmTransaction (signatureSubscribe)',
  sync: 'ledger: writer.sync (head read, queued behind appends)',
  append: 'ledger: writer.executeAtHead (group-commit append)',
  markDone: 'outbox: mark done (UPDATE)',
  outboxOther: 'outbox: other',
  other: 'other JS between stages',
  after: 'after the last timed call: the outcome',
  httpOut: 'HTTP out: reply, serialise, client reads',
  baselineSign: 'build + sign (web3.js, cached blockhash)',
} as const;

/** Untimed work between two timed calls, named after the call it leads to. */
const GAP_BEFORE: Record<string, string> = { [STAGE.fee]: STAGE.build, [STAGE.markSigned]: STAGE.sign };

/** Wraps the running service's parts the pipeline goes through, and its entry point, so each transfer leaves a trace. */
function instrumentPipeline(server: RunningServer, finished: Map<string, Trace>): void {
  const { pipeline, writer } = server.services;
  const deps = (pipeline as unknown as { deps: PipelineDeps }).deps;
  timeCalls(deps.outbox, {
    reserve: STAGE.reserve,
    markSigned: STAGE.markSigned,
    get: STAGE.reread,
    markDone: STAGE.markDone,
    release: STAGE.outboxOther,
    renewLease: STAGE.outboxOther,
  });
  timeCalls(deps, { walletSecret: STAGE.custody });
  timeCalls(writer, { sync: STAGE.sync, executeAtHead: STAGE.append });
  timeCalls(server.services.chain.connection, chainStages());
  const run = pipeline.run.bind(pipeline);
  pipeline.run = (intent) => {
    const trace: Trace = { start: performance.now(), end: 0, spans: [] };
    return traces.run(trace, async () => {
      const outcome = await run(intent);
      trace.end = performance.now();
      if (outcome.executed) finished.set(outcome.signature, trace);
      return outcome;
    });
  };
}

function chainStages(): Record<string, string> {
  return {
    getLatestBlockhash: STAGE.blockhash,
    getFeeForMessage: STAGE.fee,
    getBalance: STAGE.funds,
    getMinimumBalanceForRentExemption: STAGE.funds,
    sendRawTransaction: STAGE.send,
    confirmTransaction: STAGE.confirm,
  };
}

/**
 * A trace as wall-clock milliseconds per stage, summing to the request's latency: overlapping calls (the two
 * funds-check reads run together) count only the time they add, and untimed work counts as the gap it leaves.
 */
function stagesOf(trace: Trace, sentAt = trace.start, arrivedAt = trace.end): Map<string, number> {
  const parts = new Map<string, number>();
  const add = (stage: string, ms: number) => {
    if (ms > 0) parts.set(stage, (parts.get(stage) ?? 0) + ms);
  };
  add(STAGE.httpIn, trace.start - sentAt);
  let cursor = trace.start;
  for (const span of [...trace.spans].sort((a, b) => a.start - b.start)) {
    add(GAP_BEFORE[span.stage] ?? STAGE.other, span.start - cursor);
    add(span.stage, span.end - Math.max(span.start, cursor));
    cursor = Math.max(cursor, span.end);
  }
  add(STAGE.after, trace.end - cursor);
  add(STAGE.httpOut, arrivedAt - trace.end);
  return parts;
}

interface StageFigures {
  stage: string;
  medianMs: number;
  meanMs: number;
  p99Ms: number;
  /** Of the mean latency. */
  share: number;
}

/** Per stage over all measured requests (a stage a request skipped counts 0 for it), in timeline order. */
function breakdownOf(requests: Array<Map<string, number>>): { stages: StageFigures[]; totalMeanMs: number } {
  const order: string[] = [];
  for (const parts of requests) for (const stage of parts.keys()) if (!order.includes(stage)) order.push(stage);
  const totals = requests.map((parts) => [...parts.values()].reduce((a, b) => a + b, 0));
  const totalMeanMs = totals.reduce((a, b) => a + b, 0) / Math.max(totals.length, 1);
  const stages = order.map((stage) => {
    const values = requests.map((parts) => parts.get(stage) ?? 0).sort((a, b) => a - b);
    const meanMs = values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
    return { stage, medianMs: median(values), meanMs, p99Ms: percentile(values, 99), share: meanMs / totalMeanMs };
  });
  return { stages, totalMeanMs };
}

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
      const signed = signTransaction(new VersionedTransaction(message.compileToV0Message()), [payer], recent);
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
  const { rpcUrl, wsUrl } = server.services.chain.options;
  // The baseline's own connection to the same chain, set up as the service's is.
  const direct = new Connection(rpcUrl, { commitment: 'confirmed', wsEndpoint: wsUrl });
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
      const { figures, stages } =
        target === 'baseline'
          ? await baselineRound(direct, senders, new PublicKey(sink.wallet), lamports, round)
          : await pipelineRound(server, citizens, sink, finished, lamports, round, target);
      rounds.push(figures);
      stagesByTarget[target].push(...stages);
      process.stderr.write(`${figures.tps.toFixed(0)} transfers/s, p50 ${fixed(figures.latencyMs.p50, 1)} ms, ${figures.errorCount} errors\n`);
    }
  }

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
    `${os.cpus().length} CPUs, load average ${loadAverage.join(' ')} at start, node ${process.version}`;
  const rows = rounds.map((r) => [r.target, String(r.round), fixed(r.tps, 0), fixed(r.latencyMs.p50, 1), fixed(r.latencyMs.p99, 1), String(r.ok), String(r.errorCount)]);
  for (const target of TARGETS) {
    const s = summary[target];
    rows.push([target, 'median', fixed(s.tps, 0), fixed(s.p50Ms, 1), fixed(s.p99Ms, 1), '', String(s.errors)]);
  }
  const out = [title, '', table(['target', 'round', 'transfers/s', 'p50 ms', 'p99 ms', 'ok', 'errors'], rows), ''];
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
  const errorLines = rounds.flatMap((r) => Object.entries(r.errors).map(([kind, n]) => `  ${r.target} round ${r.round}: ${n} x ${kind}: ${r.errorSamples[kind] ?? ''}`));
  if (errorLines.length) out.push('', 'errors:', ...errorLines);
  console.log(`\n${out.join('\n')}`);

  const dir = path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `transfer-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { clients: CLIENTS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, requestTimeoutMs: REQUEST_TIMEOUT_MS, path: PATH };
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryBytes: os.totalmem(), node: process.version, platform: process.platform, loadAverage };
  const ratios = { pipeline: ratio('pipeline'), pipelineOneWallet: ratio('pipeline, one wallet') };
  fs.writeFileSync(file, `${JSON.stringify({ startedAt: startedAt.toISOString(), settings, machine, rounds, summary, ratios, breakdowns }, null, 2)}\n`);
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = STARTUP_TIMEOUT_MS + ROUNDS * TARGETS.length * ((WARMUP_SECONDS + SECONDS) * 1000 + REQUEST_TIMEOUT_MS) + 60_000;
runBench('bench:transfer', limitMs, main);
