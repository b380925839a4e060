import { randomBytes } from 'node:crypto';
import os from 'node:os';
import bs58 from 'bs58';
import { PublicKey, type Connection } from '@solana/web3.js';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { TOKEN_PROGRAMS, rawToUi, readMarketStates, type SolanaChain } from '@svc/chain';
import { MarketStore, PortfolioStore, type FoundTokenAccount, type MarketView, type PortfolioRow, type RefreshSummary } from '@svc/marketdata';
import { actions, agents, readCheckpoint, tokens } from '@svc/projections';
import { WorkerLoop, renewWhileHeld } from './loop';
import { TOKEN_ACCOUNT_HEAD, associatedTokenAddress, readAccountHeads, scanWallets } from './walletReads';

/** How often every citizen's portfolio is read again from the chain (one process per period). */
export const PORTFOLIO_REFRESH_MS = 60_000;
/** How often a process looks whether the period's refresh is due: another process may have taken the last one. */
const CLAIM_POLL_MS = 5_000;
/** How long a claimed refresh is held before another process may take it over (extended while it runs). */
const LEASE_MS = 60_000;
/** How often a waiting explicit refresh asks again for a refresh another process holds. */
const CLAIM_RETRY_MS = 100;
/** A cached market figure older than this, or one that predates the coin's last action, is read again. */
const MARKET_MAX_AGE_MS = 30_000;
/** Token account addresses derived between two turns of the event loop. */
const DERIVATIONS_PER_SLICE = 100;

/** What one refresh did; the hook tests wait on instead of sleeping. */
export interface PortfolioRefresh extends RefreshSummary {
  periodic: boolean;
}

/** Knobs with production defaults. */
export interface PortfolioRefresherTuning {
  everyMs?: number;
  /** How often this process looks whether the period's refresh is due (default the smaller of everyMs and 5 s). */
  pollMs?: number;
  leaseMs?: number;
  /** Called after each refresh is saved. */
  onRefreshed?: (refresh: PortfolioRefresh) => void;
}

export interface PortfolioRefresherOptions extends PortfolioRefresherTuning {
  db: Kysely<any>;
  readModelSchema: string;
  chain: () => SolanaChain;
  log: Logger;
}

export interface RunningPortfolioRefresher {
  /**
   * Refreshes every citizen now, in this process; when another holds the refresh, waits until it is free first.
   * Resolves once saved.
   */
  refresh(): Promise<PortfolioRefresh>;
  /** The periodic refresh, if it is due and no one holds it; null when it did not run here. */
  runPeriodic(): Promise<PortfolioRefresh | null>;
  stop(): Promise<void>;
}

/**
 * Keeps `chain_cache.portfolios` fresh: every `everyMs`, one process (by a lease in the database) reads every
 * citizen's SOL and token holdings in batches and prices them. So the RPC call rate is one refresh per period,
 * however many API and worker processes run, and the API only reads the result.
 *
 * - SOL: the wallets, 100 a getMultipleAccounts call.
 * - Holdings: the associated token account of every (citizen, coin) pair an action on the ledger named (under
 *   the coin's own token program), in the same batched calls; plus the token accounts earlier scans found.
 * - A wallet is scanned with getTokenAccountsByOwner (both token programs) only when the ledger says its
 *   holdings may have changed in a way the pairs cannot tell: a self-custody wallet before its first pricing
 *   (it may have held anything before it registered), and after a `submit` action (any transaction). Tokens
 *   that reach a wallet with nothing on the ledger at all (sent from outside) count from its next scan.
 * - Prices: the market cache (`chain_cache.token_markets`, kept by the market refresher) when its figure is
 *   current, else the coin's curve or pool read now (batched, and cached for everyone); the price API, in one
 *   batched request, for coins no pump venue prices. SOL/USD from the same API.
 */
export async function startPortfolioRefresher(options: PortfolioRefresherOptions): Promise<RunningPortfolioRefresher> {
  const store = await new PortfolioStore(options.db).init();
  const markets = await new MarketStore(options.db).init();
  const refresher = new PortfolioRefresher(options, store, markets);
  await refresher.start();
  return refresher;
}

class PortfolioRefresher implements RunningPortfolioRefresher {
  private readonly everyMs: number;
  private readonly leaseMs: number;
  private readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly loop: WorkerLoop;

  constructor(
    private readonly options: PortfolioRefresherOptions,
    private readonly store: PortfolioStore,
    private readonly markets: MarketStore,
  ) {
    this.everyMs = options.everyMs ?? PORTFOLIO_REFRESH_MS;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    const pollMs = options.pollMs ?? Math.min(this.everyMs, CLAIM_POLL_MS);
    this.loop = new WorkerLoop({ name: 'portfolio refresher', log: options.log, pass: () => this.runPeriodic().then(() => pollMs), retryMs: pollMs });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  runPeriodic(): Promise<PortfolioRefresh | null> {
    return this.claimed(true);
  }

  async refresh(): Promise<PortfolioRefresh> {
    for (;;) {
      this.loop.signal.throwIfAborted();
      const done = await this.claimed(false);
      if (done) return done;
      await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS));
    }
  }

  /** Runs a refresh under the lease, if this process gets it. */
  private async claimed(periodic: boolean): Promise<PortfolioRefresh | null> {
    const claim = { now: Date.now(), leaseMs: this.leaseMs, everyMs: this.everyMs, periodic };
    if (!(await this.store.claim(this.holder, claim))) return null;
    const lease = renewWhileHeld(() => this.store.extend(this.holder, Date.now() + this.leaseMs), this.leaseMs, this.options.log, 'portfolio refresh');
    try {
      const refresh = { ...(await this.pass()), periodic };
      try {
        this.options.onRefreshed?.(refresh);
      } catch (error) {
        this.options.log.warn({ err: error }, 'portfolio refresher onRefreshed hook failed');
      }
      return refresh;
    } finally {
      lease.stop();
      await this.store.release(this.holder).catch((error) => this.options.log.warn({ err: error }, 'portfolio refresh lease not released'));
    }
  }

  private async pass(): Promise<RefreshSummary> {
    const started = Date.now();
    const { db, readModelSchema } = this.options;
    const chain = this.options.chain();
    const connection = chain.connection;
    // Taken before the chain is read: every action up to it confirmed before it was recorded, so the reading includes it.
    const ledgerSeq = await readCheckpoint(db, readModelSchema);
    const solUsdPrice = chain.solUsd();
    const [citizens, pairs, unnamed, scannedSeqs, stored] = await Promise.all([
      agents.citizenWallets(db, readModelSchema),
      tokens.heldPairs(db, readModelSchema),
      actions.lastUnnamedTokenMoves(db, readModelSchema, ledgerSeq),
      this.store.scannedSeqs(),
      this.store.accounts(),
    ]);
    this.loop.signal.throwIfAborted();

    // Wallets whose holdings the pairs cannot tell: scanned now, what earlier scans found there replaced.
    const toScan = citizens.filter((c) => {
      const scanned = scannedSeqs.get(c.agent_id) ?? null;
      if (c.custody === 'self' && scanned === null) return true;
      return (unnamed.get(c.agent_id) ?? -1) > (scanned ?? -1);
    });
    const scannedNow = await scanWallets(connection, toScan);
    const rescanned = new Set(toScan.map((c) => c.agent_id));
    const known = stored.filter((a) => a.source === 'pair' || !rescanned.has(a.agent_id));
    this.loop.signal.throwIfAborted();

    // Each coin's token program, decimals and price.
    const lastAction = new Map<string, number>();
    for (const pair of pairs) lastAction.set(pair.mint, Math.max(lastAction.get(pair.mint) ?? -1, pair.last_seq));
    for (const account of [...known, ...scannedNow]) if (!lastAction.has(account.mint)) lastAction.set(account.mint, -1);
    const { coins, marketsRead } = await this.coins(connection, lastAction, ledgerSeq);
    this.loop.signal.throwIfAborted();

    // The associated account of each pair no refresh derived before.
    const derived = new Set(known.filter((a) => a.source === 'pair').map((a) => `${a.agent_id}|${a.mint}`));
    const byId = new Map(citizens.map((c) => [c.agent_id, c]));
    const added: FoundTokenAccount[] = [...scannedNow];
    let derivedNow = 0;
    for (const pair of pairs) {
      const coin = coins.get(pair.mint);
      const citizen = byId.get(pair.agent_id);
      if (!coin || !citizen || derived.has(`${pair.agent_id}|${pair.mint}`)) continue;
      // A third of a millisecond each: the process (the API too, when embedded) gets its turn between slices.
      if (++derivedNow % DERIVATIONS_PER_SLICE === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        this.loop.signal.throwIfAborted();
      }
      const account = associatedTokenAddress(new PublicKey(pair.mint), new PublicKey(citizen.wallet), coin.programId);
      added.push({ agent_id: pair.agent_id, account, mint: pair.mint, token_program: coin.programId.toBase58(), source: 'pair' });
    }

    // One list of keys: every wallet, then every token account, each read once.
    const index = new Map(citizens.map((c, i) => [c.agent_id, i]));
    const held = new Map<string, { citizen: number; mint: string }>();
    for (const account of [...known, ...added]) {
      const citizen = index.get(account.agent_id);
      if (citizen !== undefined && coins.has(account.mint)) held.set(account.account, { citizen, mint: account.mint });
    }
    const heldKeys = [...held.keys()];
    const read = await readAccountHeads(connection, [...citizens.map((c) => c.wallet), ...heldKeys], this.loop.signal);
    this.loop.signal.throwIfAborted();

    // A token account's mint, owner and amount sit at the same offsets in both token programs' layouts.
    const walletBytes = citizens.map((c) => Buffer.from(bs58.decode(c.wallet)));
    const mintBytes = new Map([...coins.keys()].map((mint) => [mint, Buffer.from(bs58.decode(mint))]));
    const amounts: Array<Map<string, number>> = citizens.map(() => new Map());
    heldKeys.forEach((key, i) => {
      const account = read.accounts[citizens.length + i];
      const { citizen, mint } = held.get(key)!;
      const coin = coins.get(mint)!;
      if (!account || account.owner !== coin.programId.toBase58() || account.data.length < TOKEN_ACCOUNT_HEAD) return;
      const data = account.data;
      if (!data.subarray(0, 32).equals(mintBytes.get(mint)!) || !data.subarray(32, 64).equals(walletBytes[citizen]!)) return;
      const raw = data.readBigUInt64LE(64);
      if (raw === 0n) return;
      const mine = amounts[citizen]!;
      mine.set(mint, (mine.get(mint) ?? 0) + rawToUi(raw, coin.decimals));
    });

    // Coins held that no venue prices: the price API, all at once.
    const solUsd = await solUsdPrice;
    const unpriced = [...new Set(amounts.flatMap((m) => [...m.keys()]))].filter((mint) => coins.get(mint)!.priceSol === null);
    if (unpriced.length > 0) {
      const usd = await chain.usdPrices(unpriced);
      for (const mint of unpriced) {
        const price = usd.get(mint) ?? null;
        if (price !== null && solUsd) coins.get(mint)!.priceSol = price / solUsd;
      }
    }

    const pricedAt = Date.now();
    const rows: PortfolioRow[] = citizens.map((c, i) => {
      const sol = (read.accounts[i]?.lamports ?? 0) / 1e9;
      let tokensSol = 0;
      let unpricedHoldings = 0;
      for (const [mint, amount] of amounts[i]!) {
        const price = coins.get(mint)!.priceSol;
        if (price === null) unpricedHoldings++;
        else tokensSol += amount * price;
      }
      const portfolioSol = sol + tokensSol;
      return {
        agent_id: c.agent_id,
        handle: c.handle,
        wallet: c.wallet,
        karma: c.karma,
        registered_seq: c.registered_seq,
        sol,
        tokens_sol: tokensSol,
        portfolio_sol: portfolioSol,
        portfolio_usd: solUsd ? Math.round(portfolioSol * solUsd * 100) / 100 : null,
        holdings: amounts[i]!.size,
        unpriced_holdings: unpricedHoldings,
        priced_at: pricedAt,
        priced_slot: read.slot,
        ledger_seq: ledgerSeq,
        scanned_seq: rescanned.has(c.agent_id) ? ledgerSeq : (scannedSeqs.get(c.agent_id) ?? null),
      };
    });
    const summary: RefreshSummary = {
      started_at: started,
      priced_at: pricedAt,
      priced_slot: read.slot,
      ledger_seq: ledgerSeq,
      sol_usd: solUsd,
      citizens: citizens.length,
      accounts_read: read.accounts.length,
      account_calls: read.calls,
      wallets_scanned: toScan.length,
      markets_read: marketsRead,
      api_priced: unpriced.length,
      duration_ms: 0,
    };
    this.loop.signal.throwIfAborted();
    await this.store.save(rows, { scannedAgentIds: [...rescanned], added }, { ...summary, duration_ms: Date.now() - started });
    return { ...summary, duration_ms: Date.now() - started };
  }

  /**
   * By mint: its token program, decimals and SOL price (null until the price API prices it). The cached market
   * figure when it is current, else the mint, its curve and its pool read now in one batched read, and saved.
   * An address that is no mint is left out.
   */
  private async coins(connection: Connection, lastAction: Map<string, number>, ledgerSeq: number): Promise<{ coins: Map<string, Coin>; marketsRead: number }> {
    const mints = [...lastAction.keys()];
    const now = Date.now();
    const cached = await this.markets.findMany(mints);
    const current = (m: MarketView | undefined, mint: string): m is MarketView =>
      m !== undefined && m.ledger_seq >= lastAction.get(mint)! && now - m.updated_at < MARKET_MAX_AGE_MS;
    const coins = new Map<string, Coin>();
    const stale: string[] = [];
    for (const mint of mints) {
      const market = cached.get(mint);
      if (current(market, mint)) coins.set(mint, { programId: new PublicKey(market.token_program), decimals: market.decimals, priceSol: market.price_sol });
      else stale.push(mint);
    }
    if (stale.length > 0) {
      const reading = await readMarketStates(connection, stale);
      const states = [...reading.states.values()].filter((s) => s !== null);
      await this.markets.save(states, { slot: reading.slot, ledgerSeq, at: Date.now() });
      for (const state of states) {
        if (!TOKEN_PROGRAMS.some((p) => p.toBase58() === state.tokenProgram)) continue;
        coins.set(state.mint, { programId: new PublicKey(state.tokenProgram), decimals: state.decimals, priceSol: state.priceSol });
      }
    }
    return { coins, marketsRead: stale.length };
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/** How one coin is held and priced. */
interface Coin {
  programId: PublicKey;
  decimals: number;
  /** SOL per whole token; null when no one prices it. */
  priceSol: number | null;
}
