/**
 * `npm run bench:leaderboard`: one leaderboard refresh for BENCH_CITIZENS (10,000) citizens holding 3 coins each
 * (of BENCH_COINS, 30, pump coins on their curves), as the pricing worker runs it (apps/workers/src/portfolios.ts:
 * wallets and token accounts 100 a getMultipleAccounts call, prices from the market cache, the read model written),
 * against a naive refresh that makes one getBalance and one getTokenAccountsByOwner call per citizen, in the same
 * run; RPC calls counted on the wire and wall time per refresh, BENCH_ROUNDS (3) rounds alternated.
 *
 * The world is written, not traded: the wallets, coins and 30,000 token accounts into the genesis of the bundled
 * chain, which runs in its own process as an RPC node would, the registrations and one recorded buy per holding
 * straight through the ledger writer, then projected. The first
 * refresh also derives every pair's token account address (once, kept in the read model) and reads the coins'
 * markets; later ones are the steady state.
 *
 * The bundled chain keeps no index of token accounts by owner, so each of its getTokenAccountsByOwner calls scans
 * every token account (about 1.5 s at 30,000); a real RPC node answers it from an index. The naive refresh is
 * therefore measured in full for its getBalance half and on BENCH_NAIVE_SAMPLE (8) citizens a round for its
 * getTokenAccountsByOwner half, extrapolated to every citizen; the ratios are reported against both the
 * extrapolated whole and the measured getBalance half alone (a lower bound whatever the RPC). Runs on a fresh
 * PostgreSQL database, dropped at the end. Writes .bench/leaderboard-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import pino from 'pino';
import { startPortfolioRefresher, type PortfolioRefresh } from '@svc/app-workers';
import { SolanaChain, rawToUi } from '@svc/chain';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { PortfolioStore } from '@svc/marketdata';
import { Projector, projections } from '@svc/projections';
import { openDatabase } from '@svc/readmodel';
import { LeaderboardCache } from '../apps/api/src/society/leaderboard';
import { freshDatabase, tempDir } from '../test/support/env';
import { curveTokens } from '../test/support/portfolios';
import { startChild } from './bench/children';
import { runBench, type Cleanup } from './bench/cleanup';
import { HELD, leaderboardWorld } from './bench/leaderboardWorld';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { median } from './bench/stats';
import { executeAll } from './bench/seed';

const ROOT = path.resolve(__dirname, '..');
const CITIZENS = Math.floor(setting('BENCH_CITIZENS', 10_000, 10));
const COINS = Math.floor(setting('BENCH_COINS', 30, 3));
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const NAIVE_SAMPLE = Math.floor(setting('BENCH_NAIVE_SAMPLE', 8, 1));
const HOUR = 3_600_000;
/** Calls in flight at once, for the naive refresh too: the worker's own concurrency. */
const IN_FLIGHT = 4;

/** JSON-RPC calls a Connection sent, by method. */
class CallCounter {
  readonly byMethod = new Map<string, number>();
  reset(): void {
    this.byMethod.clear();
  }
  total(): number {
    return [...this.byMethod.values()].reduce((a, b) => a + b, 0);
  }
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.byMethod);
  }
  connection(rpcUrl: string, wsUrl: string): Connection {
    return new Connection(rpcUrl, {
      commitment: 'confirmed',
      wsEndpoint: wsUrl,
      fetch: async (input, init) => {
        const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
        for (const call of Array.isArray(body) ? body : body ? [body] : []) this.byMethod.set(call.method, (this.byMethod.get(call.method) ?? 0) + 1);
        for (let attempt = 1; ; attempt++) {
          try {
            return await fetch(input, init);
          } catch (error) {
            // The chain's server, busy with a getTokenAccountsByOwner scan, closed an idle keep-alive socket just as
            // it was reused; these are reads, so the same request is sent again.
            if (attempt >= 3 || (error as { cause?: { code?: unknown } })?.cause?.code !== 'ECONNRESET') throw error;
          }
        }
      },
    });
  }
}

/** `work(i)` for i in [0, n), `IN_FLIGHT` at a time. */
async function pool(n: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, async () => {
    while (next < n) await work(next++);
  }));
}

interface BatchedRound {
  round: number;
  wallMs: number;
  calls: Record<string, number>;
  /** Requests to the price API (SOL/USD; looked up at most once a minute per process). */
  priceRequests: number;
  refresh: PortfolioRefresh;
}

interface NaiveRound {
  round: number;
  balanceCalls: number;
  balanceWallMs: number;
  tokenCallsSampled: number;
  tokenSampleWallMs: number;
  /** The getTokenAccountsByOwner half for every citizen, from the sample. */
  tokenWallMsExtrapolated: number;
  wallMsExtrapolated: number;
  calls: number;
}

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const loadAverage = os.loadavg().map((n) => Number(n.toFixed(2)));
  const log = pino({ level: 'warn' });

  // The world, built the same way here and in the chain's own process: coins on their curves, three held by each citizen.
  const seed = randomBytes(4).toString('hex');
  const { coins, wallets } = leaderboardWorld(CITIZENS, COINS, seed);
  let phase = Date.now();
  process.stderr.write(`starting the bundled chain in its own process, ${CITIZENS} wallets, ${COINS} coins and ${CITIZENS * HELD} token accounts in its genesis ... `);
  const chainProcess = await startChild({
    name: 'chain',
    entry: path.join(__dirname, 'bench/serveLeaderboardChain.ts'),
    cwd: ROOT,
    env: { ...process.env, BENCH_WORLD: `${CITIZENS},${COINS},${seed}` },
    startupTimeoutMs: 180_000,
  });
  cleanup.add('stop the chain', () => chainProcess.stop());
  const net = { rpcUrl: chainProcess.url, wsUrl: String(chainProcess.ready.ws) };
  process.stderr.write(`${((Date.now() - phase) / 1000).toFixed(1)} s\n`);

  const db = await freshDatabase('bench_leaderboard');
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const database = await openDatabase({ url: db.url, dataDir: tempDir('bench-leaderboard') });
  cleanup.add('close the database', () => database.close());
  const store = await new PostgresEventStore(database).init();
  cleanup.add('close the event store', () => store.close());

  phase = Date.now();
  process.stderr.write(`recording ${CITIZENS} registrations and ${CITIZENS * HELD} buys through the ledger writer ... `);
  const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 2000 });
  await writer.start();
  const run = (commands: LedgerCommand[]) => executeAll(writer, commands);
  const agentId = (i: number) => `agent_lb${i}`;
  await run(wallets.map((w, i) => ({ type: 'RegisterCitizen', data: { agent_id: agentId(i), handle: `lb${i}`, model: 'bench', bio: '', wallet: w.owner.toBase58(), custody: 'service' } })));
  await run(
    wallets.flatMap((w, i) =>
      w.tokens.map((held, k): LedgerCommand => ({
        type: 'RecordAction',
        agentId: agentId(i),
        data: { action: 'buy', signature: `bench${i}x${k}`, wallet: w.owner.toBase58(), details: { mint: held.mint.toBase58(), venue: 'pump', route: 'bench', spent_sol: 0.01 } },
      })),
    ),
  );
  const projector = await new Projector({ database, store, projections, schema: 'rm', batchSize: 2000 }).init();
  const head = await projector.catchUp();
  process.stderr.write(`ledger head ${head}, projected, ${((Date.now() - phase) / 1000).toFixed(1)} s\n`);

  // The worker on a chain whose RPC calls are counted; no periodic refresh, only the ones measured.
  const counter = new CallCounter();
  const counted = counter.connection(net.rpcUrl, net.wsUrl);
  let priceRequests = 0;
  const countedPrices: typeof fetch = (input, init) => {
    priceRequests++;
    return fetch(input, init);
  };
  const chain = Object.assign(new SolanaChain({ rpcUrl: net.rpcUrl, wsUrl: net.wsUrl, priceUrl: net.rpcUrl, fetch: countedPrices }), { connection: counted });
  cleanup.add('close the chain connection', () => chain.close());
  const portfolioStore = await new PortfolioStore(database.db).init();
  await database.db.updateTable('chain_cache.portfolio_refresh').set({ due_at: Date.now() + HOUR }).execute();
  const refresher = await startPortfolioRefresher({ db: database.db, readModelSchema: 'rm', chain: () => chain, log, everyMs: HOUR, pollMs: HOUR });
  cleanup.add('stop the refresher', () => refresher.stop());

  const batched: BatchedRound[] = [];
  const naive: NaiveRound[] = [];
  const balances: number[] = new Array(CITIZENS).fill(-1);
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`round ${round}/${ROUNDS}: batched refresh ... `);
    counter.reset();
    priceRequests = 0;
    let started = performance.now();
    const refresh = await refresher.refresh();
    const b: BatchedRound = { round, wallMs: performance.now() - started, calls: counter.snapshot(), priceRequests, refresh };
    batched.push(b);
    process.stderr.write(`${counter.total()} calls, ${(b.wallMs / 1000).toFixed(2)} s; naive ... `);

    counter.reset();
    started = performance.now();
    await pool(CITIZENS, async (i) => {
      balances[i] = await counted.getBalance(wallets[i]!.owner, 'confirmed');
    });
    const balanceWallMs = performance.now() - started;
    const balanceCalls = counter.total();
    const sample = Array.from({ length: NAIVE_SAMPLE }, (_, k) => (round * 7_919 + k * 1_013) % CITIZENS);
    started = performance.now();
    await pool(sample.length, async (k) => {
      await counted.getTokenAccountsByOwner(wallets[sample[k]!]!.owner, { programId: TOKEN_2022_PROGRAM_ID }, 'confirmed');
    });
    const tokenSampleWallMs = performance.now() - started;
    const tokenWallMsExtrapolated = (tokenSampleWallMs / sample.length) * CITIZENS;
    const n: NaiveRound = {
      round,
      balanceCalls,
      balanceWallMs,
      tokenCallsSampled: sample.length,
      tokenSampleWallMs,
      tokenWallMsExtrapolated,
      wallMsExtrapolated: balanceWallMs + tokenWallMsExtrapolated,
      calls: 2 * CITIZENS,
    };
    naive.push(n);
    process.stderr.write(`getBalance x ${balanceCalls} ${(balanceWallMs / 1000).toFixed(2)} s, getTokenAccountsByOwner x ${sample.length} ${(tokenSampleWallMs / 1000).toFixed(2)} s\n`);
  }

  // The figures are exact: every SOL balance the read model holds is the one getBalance answered.
  const rows = new Map((await portfolioStore.all()).map((r) => [r.agent_id, r]));
  const wrong = wallets.filter((_, i) => rows.get(agentId(i))?.sol !== balances[i]! / 1e9).length;
  if (wrong > 0) throw new Error(`${wrong} citizens' SOL in the read model differs from getBalance`);
  const priceOf = new Map(coins.map((c) => [c.mint.toBase58(), rawToUi(c.curveLamports!, 9) / rawToUi(curveTokens(c.curveLamports!), c.decimals)]));
  const off = wallets.filter((w, i) => {
    const want = w.tokens.reduce((sum, t) => sum + rawToUi(t.raw, 6) * priceOf.get(t.mint.toBase58())!, 0);
    return Math.abs(rows.get(agentId(i))!.tokens_sol - want) > 1e-9 * Math.max(1, want);
  }).length;
  if (off > 0) throw new Error(`${off} citizens' token value in the read model differs from their seeded holdings at the curves' prices`);

  // What an API process does per cache period: read the read model, no RPC call.
  counter.reset();
  const boardMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await new LeaderboardCache(database.db, 'rm').get();
    boardMs.push(performance.now() - started);
  }
  const boardCalls = counter.total();

  const steady = batched.length > 1 ? batched.slice(1) : batched;
  const batchedCalls = median(steady.map((b) => Object.values(b.calls).reduce((a, c) => a + c, 0)));
  const batchedWallMs = median(steady.map((b) => b.wallMs));
  const naiveWallMs = median(naive.map((n) => n.wallMsExtrapolated));
  const naiveBalanceWallMs = median(naive.map((n) => n.balanceWallMs));
  const ratios = {
    calls: (2 * CITIZENS) / batchedCalls,
    wall: naiveWallMs / batchedWallMs,
    wallBalanceHalfOnly: naiveBalanceWallMs / batchedWallMs,
  };
  const method = (calls: Record<string, number>, name: string) => String(calls[name] ?? 0);
  const rowsOut = [
    ...batched.map((b) => [
      'batched',
      String(b.round) + (b.round === 1 ? ' (first)' : ''),
      String(Object.values(b.calls).reduce((a, c) => a + c, 0)),
      method(b.calls, 'getMultipleAccounts'),
      method(b.calls, 'getBalance'),
      method(b.calls, 'getTokenAccountsByOwner'),
      String(b.priceRequests),
      fixed(b.wallMs / 1000, 2),
    ]),
    ...naive.map((n) => [
      'naive',
      String(n.round),
      String(n.calls),
      '0',
      String(n.balanceCalls),
      String(CITIZENS),
      '-',
      `${fixed(n.wallMsExtrapolated / 1000, 1)} *`,
    ]),
  ];
  const title =
    `leaderboard refresh: ${CITIZENS} citizens holding ${HELD} of ${COINS} coins each, on the bundled chain (its own process) over HTTP JSON-RPC, ${IN_FLIGHT} calls in flight for both; ` +
    `${ROUNDS} round(s); ${os.cpus().length} CPUs, load average ${loadAverage.join(' ')}, node ${process.version}`;
  const out = [
    title,
    '',
    table(['refresh', 'round', 'rpc calls', 'getMultipleAccounts', 'getBalance', 'getTokenAccountsByOwner', 'price API', 'wall s'], rowsOut),
    '',
    ...naive.map(
      (n) =>
        `* naive round ${n.round}: ${n.balanceCalls} getBalance measured in ${fixed(n.balanceWallMs / 1000, 2)} s, plus ${CITIZENS} getTokenAccountsByOwner ` +
        `extrapolated from ${n.tokenCallsSampled} measured in ${fixed(n.tokenSampleWallMs / 1000, 2)} s (the bundled chain scans every token account for each)`,
    ),
    ...batched.map((b) => `batched round ${b.round}: ${b.refresh.accounts_read} accounts read in ${b.refresh.account_calls} calls, ${b.refresh.markets_read} markets read, ${b.refresh.wallets_scanned} wallets scanned`),
    '',
    `naive / batched (steady rounds, medians): RPC calls ${fixed(ratios.calls, 1)}x (${2 * CITIZENS} vs ${batchedCalls}); ` +
      `wall time ${fixed(ratios.wall, 0)}x (${fixed(naiveWallMs / 1000, 0)} s vs ${fixed(batchedWallMs / 1000, 2)} s), ` +
      `and ${fixed(ratios.wallBalanceHalfOnly, 2)}x counting only the naive getBalance half (${fixed(naiveBalanceWallMs / 1000, 2)} s)`,
    `first refresh: ${fixed(batched[0]!.wallMs / 1000, 2)} s, of which deriving ${CITIZENS * HELD} token account addresses once (kept in the read model) and reading ${batched[0]!.refresh.markets_read} markets`,
    `API side, per cache period and process: the top 100 from the read model in ${fixed(median(boardMs), 1)} ms (median of 5), ${boardCalls} RPC calls`,
    `checked: every citizen's SOL equals getBalance, and its tokens' value its seeded holdings at the curves' prices`,
  ];
  console.log(`\n${out.join('\n')}`);

  const dir = path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `leaderboard-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryBytes: os.totalmem(), node: process.version, loadAverage };
  fs.writeFileSync(
    file,
    `${JSON.stringify({ startedAt: startedAt.toISOString(), settings: { citizens: CITIZENS, coins: COINS, held: HELD, rounds: ROUNDS, naiveSample: NAIVE_SAMPLE, inFlight: IN_FLIGHT }, machine, batched, naive, board: { ms: boardMs, rpcCalls: boardCalls }, ratios }, null, 2)}\n`,
  );
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

runBench('bench:leaderboard', 15 * 60_000, main);
