import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import pino from 'pino';
import { bondingCurvePda } from '@pump-fun/pump-sdk';
import { SolanaChain, rawToUi, type MarketState } from '@svc/chain';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { MarketStore, PortfolioStore } from '@svc/marketdata';
import { Projector, projections } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { startPortfolioRefresher, type PortfolioRefresh, type RunningPortfolioRefresher } from '@svc/app-workers';
import { LOCAL_USD_MINT, jupiterRoutes, stablecoinSeed } from '../../apps/localnet/src/jupiter';
import { LeaderboardCache } from '../../apps/api/src/society/leaderboard';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { closeConnection, localnet, type LocalnetClient } from '../support/localnet';
import { portfolioSeed, type SeededCoin, type SeededWallet } from '../support/portfolios';
import { executeInOrder } from '../support/ledgerModel';

const SOL_USD = 150;
const HOUR = 3_600_000;
/** Service-custody citizens holding the coins their actions named: with their pairs, more keys than one call takes. */
const HOLDERS = 60;

const curveCoin: SeededCoin = { mint: Keypair.generate().publicKey, decimals: 6, programId: TOKEN_2022_PROGRAM_ID, curveLamports: 40_000_000_000n };
/** A classic SPL mint the market cache prices. */
const splCoin: SeededCoin = { mint: Keypair.generate().publicKey, decimals: 9, programId: TOKEN_PROGRAM_ID };
/** A Token-2022 mint no action names: only scans find it. */
const hiddenCoin: SeededCoin = { mint: Keypair.generate().publicKey, decimals: 6, programId: TOKEN_2022_PROGRAM_ID };
const CACHED_PRICE = { [splCoin.mint.toBase58()]: 0.002, [hiddenCoin.mint.toBase58()]: 0.0005 };

interface Citizen {
  agentId: string;
  wallet: SeededWallet;
  custody: 'service' | 'self';
  /** The coins its actions named. */
  named: PublicKey[];
}

const tokens = (mint: PublicKey, programId: PublicKey, raw: bigint, address?: PublicKey) => ({ mint, programId, raw, address });

const holders: Citizen[] = Array.from({ length: HOLDERS }, (_, i) => {
  const held = [tokens(curveCoin.mint, TOKEN_2022_PROGRAM_ID, BigInt(i + 1) * 1_000_000_000n + 123n)];
  if (i % 2 === 0) held.push(tokens(splCoin.mint, TOKEN_PROGRAM_ID, BigInt(i + 1) * 7_000_000_001n));
  if (i % 5 === 0) held.push(tokens(LOCAL_USD_MINT, TOKEN_PROGRAM_ID, BigInt(i + 1) * 2_500_000n));
  return {
    agentId: `agent_h${i}`,
    wallet: { owner: Keypair.generate().publicKey, lamports: 1_000_000_000n + BigInt(i) * 10_000_019n, tokens: held },
    custody: 'service',
    named: held.map((t) => t.mint),
  };
});
/** Self custody: it may have held anything before it registered, so its first pricing scans it. */
const selfCustody: Citizen = {
  agentId: 'agent_self',
  wallet: {
    owner: Keypair.generate().publicKey,
    lamports: 3_000_000_000n,
    tokens: [tokens(curveCoin.mint, TOKEN_2022_PROGRAM_ID, 5_000_000_000n), tokens(hiddenCoin.mint, TOKEN_2022_PROGRAM_ID, 9_000_000n, Keypair.generate().publicKey)],
  },
  custody: 'self',
  named: [],
};
/** A `submit` on the ledger: any transaction, so its wallet is scanned. */
const submitter: Citizen = {
  agentId: 'agent_submit',
  wallet: { owner: Keypair.generate().publicKey, lamports: 2_000_000_000n, tokens: [tokens(hiddenCoin.mint, TOKEN_2022_PROGRAM_ID, 4_000_000n, Keypair.generate().publicKey)] },
  custody: 'service',
  named: [],
};
/** Tokens that arrived with nothing on the ledger: not counted, and its wallet never scanned. */
const quiet: Citizen = {
  agentId: 'agent_quiet',
  wallet: { owner: Keypair.generate().publicKey, lamports: 1_500_000_000n, tokens: [tokens(hiddenCoin.mint, TOKEN_2022_PROGRAM_ID, 8_000_000n)] },
  custody: 'service',
  named: [],
};
const everyone = [...holders, selfCustody, submitter, quiet];

/** JSON-RPC methods a Connection sent, with the number of keys of each getMultipleAccounts. */
interface Counted {
  methods: string[];
  keys: number[];
  reset(): void;
  count(method: string): number;
}

function countingConnection(t: LocalnetClient): { connection: Connection; counted: Counted } {
  const counted: Counted = {
    methods: [],
    keys: [],
    reset() {
      this.methods.length = 0;
      this.keys.length = 0;
    },
    count(method) {
      return this.methods.filter((m) => m === method).length;
    },
  };
  const connection = new Connection(t.net.rpcUrl, {
    commitment: 'confirmed',
    wsEndpoint: t.net.wsUrl,
    fetch: async (input, init) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      for (const call of Array.isArray(body) ? body : body ? [body] : []) {
        counted.methods.push(call.method);
        if (call.method === 'getMultipleAccounts') counted.keys.push(call.params[0].length);
      }
      return fetch(input, init);
    },
  });
  return { connection, counted };
}

function marketState(coin: SeededCoin, priceSol: number): MarketState {
  return {
    mint: coin.mint.toBase58(),
    venue: 'jupiter',
    tokenProgram: coin.programId.toBase58(),
    decimals: coin.decimals,
    supply: 1e9,
    bondingCurve: null,
    creator: null,
    curve: null,
    complete: false,
    mayhem: false,
    pool: null,
    priceSol,
    marketCapSol: priceSol * 1e9,
    progress: null,
  };
}

/**
 * The pricing worker against the bundled chain with citizens, coins and token accounts written at genesis, and
 * the ledger they acted on: which calls it makes (counted on the wire), the exact figures it writes, when it scans a
 * wallet, and that one process runs a refresh at a time.
 */
describe('portfolio pricing worker', () => {
  let t: LocalnetClient;
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let writer: LedgerWriter<LedgerState, LedgerCommand>;
  let projector: Projector;
  let portfolioStore: PortfolioStore;
  let chainA: SolanaChain;
  let chainB: SolanaChain;
  let countedA: Counted;
  let countedB: Counted;
  let refresherA: RunningPortfolioRefresher;
  let refresherB: RunningPortfolioRefresher;
  const refreshes: Array<PortfolioRefresh & { by: string }> = [];
  let usdPrice: number;
  let curvePrice: number;
  const log = pino({ level: 'silent' });

  async function execute(commands: LedgerCommand[]): Promise<void> {
    await executeInOrder(writer, commands);
    await projector.catchUp();
  }

  function chainFor(connection: Connection): SolanaChain {
    const chain = new SolanaChain({ rpcUrl: t.net.rpcUrl, wsUrl: t.net.wsUrl, priceUrl: t.net.rpcUrl });
    return Object.assign(chain, { connection });
  }

  beforeAll(async () => {
    t = await localnet({
      seeds: [stablecoinSeed({ solUsd: SOL_USD }), portfolioSeed([curveCoin, splCoin, hiddenCoin], everyone.map((c) => c.wallet))],
      routes: [jupiterRoutes({ solUsd: SOL_USD })],
    });
    db = await freshDatabase('portfolios');
    database = await openDatabase({ url: db.url, dataDir: tempDir('portfolios') });
    store = await new PostgresEventStore(database).init();
    writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    projector = await new Projector({ database, store, projections, schema: 'rm' }).init();
    let signature = 0;
    await execute(
      everyone.flatMap((c, i): LedgerCommand[] => [
        { type: 'RegisterCitizen', data: { agent_id: c.agentId, handle: `pf${i}`, model: 'm', bio: '', wallet: c.wallet.owner.toBase58(), custody: c.custody } },
        ...c.named.map((mint): LedgerCommand => ({
          type: 'RecordAction',
          agentId: c.agentId,
          data: { action: 'buy', signature: `SIG${signature++}`, wallet: c.wallet.owner.toBase58(), details: { mint: mint.toBase58(), venue: 'pump', spent_sol: 0.1 } },
        })),
      ]),
    );
    await execute([
      { type: 'RecordAction', agentId: submitter.agentId, data: { action: 'submit', signature: 'SIG_submit_1', wallet: submitter.wallet.owner.toBase58(), details: { programs: [] } } },
    ]);

    // The classic mint and the hidden one are priced by the market cache: readings past every action, current
    // through the whole file.
    await new MarketStore(database.db).init();
    await new MarketStore(database.db).save([marketState(splCoin, CACHED_PRICE[splCoin.mint.toBase58()]!), marketState(hiddenCoin, CACHED_PRICE[hiddenCoin.mint.toBase58()]!)], {
      slot: 1,
      ledgerSeq: 1_000_000,
      at: Date.now() + HOUR,
    });
    // No periodic refresh until a test makes one due.
    portfolioStore = await new PortfolioStore(database.db).init();
    await database.db.updateTable('chain_cache.portfolio_refresh').set({ due_at: Date.now() + HOUR }).execute();

    const a = countingConnection(t);
    const b = countingConnection(t);
    [chainA, chainB, countedA, countedB] = [chainFor(a.connection), chainFor(b.connection), a.counted, b.counted];
    const start = (chain: SolanaChain, by: string) =>
      startPortfolioRefresher({ db: database.db, readModelSchema: 'rm', chain: () => chain, log, everyMs: HOUR, pollMs: HOUR, onRefreshed: (r) => refreshes.push({ ...r, by }) });
    [refresherA, refresherB] = await Promise.all([start(chainA, 'A'), start(chainB, 'B')]);
    usdPrice = (await chainA.usdPrices([LOCAL_USD_MINT.toBase58()])).get(LOCAL_USD_MINT.toBase58())!;
    const curve = await t.connection.getAccountInfo(bondingCurvePda(curveCoin.mint));
    expect(curve).not.toBeNull();
    curvePrice = rawToUi(curveCoin.curveLamports!, 9) / rawToUi(curveTokensOf(curve!.data), curveCoin.decimals);
  }, 120_000);

  afterAll(async () => {
    await refresherA?.stop();
    await refresherB?.stop();
    for (const chain of [chainA, chainB]) if (chain) await closeConnection(chain.connection);
    await store?.close();
    await database?.close();
    await db?.drop();
    await t?.close();
  });

  /** The figures a correct refresh writes for `c`, from what genesis gave it and what the ledger tells. */
  function expected(c: Citizen) {
    const counted = c === quiet ? [] : c.wallet.tokens;
    let tokensSol = 0;
    for (const held of counted) {
      const mint = held.mint.toBase58();
      const decimals = mint === curveCoin.mint.toBase58() ? curveCoin.decimals : mint === splCoin.mint.toBase58() ? splCoin.decimals : 6;
      const price = mint === curveCoin.mint.toBase58() ? curvePrice : mint === LOCAL_USD_MINT.toBase58() ? usdPrice / SOL_USD : CACHED_PRICE[mint]!;
      tokensSol += rawToUi(held.raw, decimals) * price;
    }
    const sol = Number(c.wallet.lamports) / 1e9;
    return { sol, tokensSol, holdings: counted.length };
  }

  /** Wallets, then every distinct token account a refresh must read (the quiet wallet's is not one of them). */
  const accountKeys = () => everyone.length + everyone.filter((c) => c !== quiet).reduce((n, c) => n + c.wallet.tokens.length, 0);

  it('prices every citizen from batched getMultipleAccounts calls, scanning only the wallets the ledger cannot tell, with exact figures', async () => {
    countedA.reset();
    const refresh = await refresherA.refresh();

    // Wallets and pair accounts, 100 keys a call; the two coins with no current market figure in one more read.
    const keys = accountKeys();
    expect(refresh).toMatchObject({ citizens: everyone.length, accounts_read: keys, account_calls: Math.ceil(keys / 100), wallets_scanned: 2, markets_read: 2 });
    expect(countedA.keys.filter((n) => n === 100)).toHaveLength(Math.floor(keys / 100));
    expect(countedA.count('getMultipleAccounts')).toBe(Math.ceil(keys / 100) + 1);
    // One getTokenAccountsByOwner per token program, for the self-custody wallet and the submitter only.
    expect(countedA.count('getTokenAccountsByOwner')).toBe(4);
    expect(countedA.count('getBalance')).toBe(0);
    expect(countedA.methods.filter((m) => !['getMultipleAccounts', 'getTokenAccountsByOwner'].includes(m))).toEqual([]);

    const rows = new Map((await portfolioStore.all()).map((r) => [r.agent_id, r]));
    for (const c of everyone) {
      const row = rows.get(c.agentId)!;
      const want = expected(c);
      expect(row.sol).toBe(want.sol);
      expect(row.tokens_sol).toBeCloseTo(want.tokensSol, 12);
      expect(row.portfolio_sol).toBeCloseTo(want.sol + want.tokensSol, 12);
      expect(row.portfolio_usd).toBeCloseTo(Math.round(row.portfolio_sol * SOL_USD * 100) / 100, 9);
      expect(row).toMatchObject({ holdings: want.holdings, unpriced_holdings: 0, priced_at: refresh.priced_at, ledger_seq: refresh.ledger_seq });
    }
    expect(rows.get(selfCustody.agentId)!.scanned_seq).toBe(refresh.ledger_seq);
    expect(rows.get(quiet.agentId)).toMatchObject({ tokens_sol: 0, holdings: 0, scanned_seq: null });
    expect(refresh.sol_usd).toBe(SOL_USD);
  });

  it('refreshes again from the batch alone: no scan, no market read, what the scans found still counted', async () => {
    countedA.reset();
    const refresh = await refresherA.refresh();
    const keys = accountKeys();
    expect(refresh).toMatchObject({ accounts_read: keys, wallets_scanned: 0, markets_read: 0 });
    expect(countedA.methods).toEqual(Array(Math.ceil(keys / 100)).fill('getMultipleAccounts'));
    const row = (await portfolioStore.find(submitter.agentId))!;
    expect(row.tokens_sol).toBeCloseTo(expected(submitter).tokensSol, 12);
  });

  it('scans a wallet again after its next submit, and only that one', async () => {
    await execute([
      { type: 'RecordAction', agentId: submitter.agentId, data: { action: 'submit', signature: 'SIG_submit_2', wallet: submitter.wallet.owner.toBase58(), details: { programs: [] } } },
    ]);
    countedA.reset();
    const refresh = await refresherA.refresh();
    expect(refresh.wallets_scanned).toBe(1);
    expect(countedA.count('getTokenAccountsByOwner')).toBe(2);
    expect((await portfolioStore.find(submitter.agentId))!.scanned_seq).toBe(refresh.ledger_seq);
  });

  it('one runner at a time: two processes racing for the due refresh run it once; explicit refreshes queue behind each other', async () => {
    await database.db.updateTable('chain_cache.portfolio_refresh').set({ due_at: 0 }).execute();
    countedA.reset();
    countedB.reset();
    refreshes.length = 0;
    const [a, b] = await Promise.all([refresherA.runPeriodic(), refresherB.runPeriodic()]);
    expect([a, b].filter((r) => r !== null)).toHaveLength(1);
    expect(refreshes).toHaveLength(1);
    const calls = Math.ceil(accountKeys() / 100);
    expect(countedA.count('getMultipleAccounts') + countedB.count('getMultipleAccounts')).toBe(calls);
    // Not due again: the winner moved the period on.
    expect(await Promise.all([refresherA.runPeriodic(), refresherB.runPeriodic()])).toEqual([null, null]);

    refreshes.length = 0;
    await Promise.all([refresherA.refresh(), refresherB.refresh()]);
    expect(refreshes.map((r) => r.by).sort()).toEqual(['A', 'B']);
    const [first, second] = [...refreshes].sort((x, y) => x.started_at - y.started_at);
    expect(second!.started_at).toBeGreaterThanOrEqual(first!.started_at + first!.duration_ms);
  });

  it('a refresh held by a process that died is taken over once its lease runs out', async () => {
    const now = Date.now();
    expect(await portfolioStore.claim('dead-process', { now, leaseMs: 300, everyMs: HOUR, periodic: false })).toBe(true);
    const refresh = await refresherB.refresh();
    expect(refresh.started_at).toBeGreaterThanOrEqual(now + 300);
  });

  it('the leaderboard reads the read model alone: priced citizens by portfolio value, then the unpriced ones with null figures', async () => {
    const newcomer = Keypair.generate().publicKey.toBase58();
    await execute([{ type: 'RegisterCitizen', data: { agent_id: 'agent_new', handle: 'pfnew', model: 'm', bio: '', wallet: newcomer, custody: 'service' } }]);
    countedA.reset();
    const board = await new LeaderboardCache(database.db, 'rm').get();
    expect(countedA.methods).toEqual([]);
    const values = board.leaders.filter((l) => l.portfolio_sol !== null).map((l) => l.portfolio_sol!);
    expect(values).toHaveLength(everyone.length);
    expect(values).toEqual([...values].sort((x, y) => y - x));
    expect(board.leaders.at(-1)).toMatchObject({ agent: { id: 'agent_new', wallet: newcomer }, sol: null, portfolio_sol: null, priced_at: null });
    expect(board.leaders[0]!.rank).toBe(1);
    expect(board.sol_usd).toBe(SOL_USD);
    expect(board.priced_at).toBe(refreshes.at(-1)!.priced_at);
  });
});

/** The virtual token reserve of a pump bonding curve account (after the 8-byte discriminator). */
function curveTokensOf(data: Buffer): bigint {
  return data.readBigUInt64LE(8);
}
