import { PublicKey, type AccountInfo } from '@solana/web3.js';
import { AccountLayout, getAssociatedTokenAddressSync } from '@solana/spl-token';
import type { Kysely } from 'kysely';
import { TOKEN_PROGRAMS, rawToUi, readMarketStates, type SolanaChain } from '@svc/chain';
import { tokens, type MarketView } from '@svc/projections';
import { marketStore } from '../tokens/markets';

export const LEADERBOARD_TTL_MS = 60_000;
const LEADERS = 100;
const ACCOUNTS_PER_CALL = 100;
/** getMultipleAccountsInfo calls in flight at once. */
const CALLS_AT_ONCE = 4;
/**
 * The (citizen, coin) token accounts priced per computation, most recently traded first: 100 calls of 100
 * accounts, once a minute. A pair beyond it counts nothing until it trades again.
 */
export const MAX_HOLDINGS_PRICED = 10_000;
/** A cached market price older than this is not used; the price API (cached a minute) prices the coin instead. */
const MARKET_PRICE_MAX_AGE_MS = 120_000;

export interface Leader {
  rank: number;
  agent: { id: string; handle: string; wallet: string };
  karma: number;
  sol: number | null;
  /** The SOL value of the token holdings priced. */
  tokens_sol: number | null;
  portfolio_sol: number | null;
  portfolio_usd: number | null;
}

export interface Leaderboard {
  leaders: Leader[];
  sol_usd: number | null;
  computed_at: number;
}

/** How one coin is held and priced: its token program and decimals, and SOL per whole token. */
interface Coin {
  programId: PublicKey;
  decimals: number;
  priceSol: number | null;
}

/**
 * Citizens by portfolio value (SOL plus priced token holdings, valued in SOL), then karma, computed at most
 * once a minute per process (concurrent readers share one computation). Holdings are the token accounts of
 * the coins each citizen's recorded actions touched (deployed with a dev buy, bought, swapped, sent or
 * received), read in batches of 100 accounts, not every wallet's every account: tokens that reached a wallet
 * outside the service are not counted. Coins are priced by the chain's market figures the workers keep, or
 * the price API when there are none. With the chain unreachable, the ranking is by karma alone.
 */
export class LeaderboardCache {
  private current?: { at: number; value: Promise<Leaderboard> };

  constructor(
    private readonly db: Kysely<any>,
    private readonly schema: string,
    private readonly chain: () => SolanaChain,
  ) {}

  get(now = Date.now()): Promise<Leaderboard> {
    if (this.current && now - this.current.at < LEADERBOARD_TTL_MS) return this.current.value;
    const value = this.compute(now);
    this.current = { at: now, value };
    value.catch(() => {
      if (this.current?.value === value) this.current = undefined;
    });
    return value;
  }

  private async compute(now: number): Promise<Leaderboard> {
    const rows = (await this.db.selectFrom(`${this.schema}.agents`).select(['agent_id', 'handle', 'wallet', 'karma', 'registered_seq']).execute()) as Array<{
      agent_id: string;
      handle: string;
      wallet: string;
      karma: number;
      registered_seq: number;
    }>;
    const chain = this.chain();
    const solUsdPrice = chain.solUsd();
    const [balances, solUsd, held] = await Promise.all([
      this.balances(chain, rows.map((r) => r.wallet)),
      solUsdPrice,
      this.holdings(chain, solUsdPrice, now),
    ]);
    const ranked = rows.map((row, i) => {
      const sol = balances ? balances[i]! : null;
      const tokensSol = held === null ? null : (held.get(row.agent_id) ?? 0);
      const portfolioSol = sol === null ? null : sol + (tokensSol ?? 0);
      return {
        agent: { id: row.agent_id, handle: row.handle, wallet: row.wallet },
        karma: Number(row.karma),
        sol,
        tokens_sol: tokensSol,
        portfolio_sol: portfolioSol,
        portfolio_usd: portfolioSol !== null && solUsd !== null ? Math.round(portfolioSol * solUsd * 100) / 100 : null,
        seq: Number(row.registered_seq),
      };
    });
    ranked.sort((a, b) => (b.portfolio_sol ?? 0) - (a.portfolio_sol ?? 0) || b.karma - a.karma || a.seq - b.seq);
    return {
      leaders: ranked.slice(0, LEADERS).map(({ seq: _seq, ...leader }, i) => ({ rank: i + 1, ...leader })),
      sol_usd: solUsd,
      computed_at: now,
    };
  }

  private async balances(chain: SolanaChain, wallets: string[]): Promise<number[] | null> {
    try {
      const infos = await accounts(chain, wallets.map((w) => new PublicKey(w)));
      return infos.map((info) => (info?.lamports ?? 0) / 1e9);
    } catch {
      return null;
    }
  }

  /** By citizen: the SOL value of the priced holdings; null when they could not be read. */
  private async holdings(chain: SolanaChain, solUsdPrice: Promise<number | null>, now: number): Promise<Map<string, number> | null> {
    try {
      const pairs = await tokens.heldMints(this.db, this.schema, MAX_HOLDINGS_PRICED);
      if (pairs.length === 0) return new Map();
      const coins = await this.coins(chain, [...new Set(pairs.map((p) => p.mint))], solUsdPrice, now);
      const priced = pairs.filter((p) => coins.get(p.mint)?.priceSol);
      const infos = await accounts(
        chain,
        priced.map((p) => getAssociatedTokenAddressSync(new PublicKey(p.mint), new PublicKey(p.wallet), true, coins.get(p.mint)!.programId)),
      );
      const value = new Map<string, number>();
      priced.forEach((pair, i) => {
        const info = infos[i];
        if (!info || info.data.length < AccountLayout.span) return;
        const coin = coins.get(pair.mint)!;
        const amount = rawToUi(AccountLayout.decode(info.data.subarray(0, AccountLayout.span)).amount, coin.decimals);
        value.set(pair.agent_id, (value.get(pair.agent_id) ?? 0) + amount * coin.priceSol!);
      });
      return value;
    } catch {
      return null;
    }
  }

  /** Each coin's program, decimals and SOL price: from the cached market figures, else read now and priced by the price API. */
  private async coins(chain: SolanaChain, mints: string[], solUsdPrice: Promise<number | null>, now: number): Promise<Map<string, Coin>> {
    const store = await marketStore(this.db);
    const cached = await store.findMany(mints);
    const coins = new Map<string, Coin>();
    const fresh = (m: MarketView | undefined): m is MarketView => m !== undefined && m.price_sol !== null && now - m.updated_at < MARKET_PRICE_MAX_AGE_MS;
    for (const [mint, market] of cached) {
      if (fresh(market)) coins.set(mint, { programId: new PublicKey(market.token_program), decimals: market.decimals, priceSol: market.price_sol });
    }
    const rest = mints.filter((m) => !coins.has(m));
    if (rest.length === 0) return coins;
    const [read, usd, solUsd] = await Promise.all([readMarketStates(chain.connection, rest), chain.usdPrices(rest), solUsdPrice]);
    for (const mint of rest) {
      const state = read.states.get(mint);
      if (!state || !TOKEN_PROGRAMS.some((p) => p.toBase58() === state.tokenProgram)) continue;
      const usdPrice = usd.get(mint) ?? null;
      const priceSol = state.priceSol ?? (usdPrice !== null && solUsd ? usdPrice / solUsd : null);
      coins.set(mint, { programId: new PublicKey(state.tokenProgram), decimals: state.decimals, priceSol });
    }
    return coins;
  }
}

/** Accounts in order, 100 keys a call, a few calls at a time. */
async function accounts(chain: SolanaChain, keys: PublicKey[]): Promise<Array<AccountInfo<Buffer> | null>> {
  const out: Array<AccountInfo<Buffer> | null> = new Array(keys.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next * ACCOUNTS_PER_CALL < keys.length) {
      const at = next++ * ACCOUNTS_PER_CALL;
      const infos = await chain.connection.getMultipleAccountsInfo(keys.slice(at, at + ACCOUNTS_PER_CALL));
      infos.forEach((info, i) => (out[at + i] = info));
    }
  };
  await Promise.all(Array.from({ length: CALLS_AT_ONCE }, worker));
  return out;
}
