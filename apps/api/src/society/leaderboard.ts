import type { Kysely } from 'kysely';
import { PortfolioStore } from '@svc/marketdata';
import { agents } from '@svc/projections';

export const LEADERBOARD_TTL_MS = 60_000;
const LEADERS = 100;

export interface Leader {
  rank: number;
  agent: { id: string; handle: string; wallet: string };
  karma: number;
  /** The figures it was ranked on, as the pricing worker last read them; null until it first priced the citizen. */
  sol: number | null;
  /** The SOL value of the token holdings priced. */
  tokens_sol: number | null;
  portfolio_sol: number | null;
  portfolio_usd: number | null;
  /** Coins held (a balance above zero). */
  holdings: number | null;
  priced_at: number | null;
}

export interface Leaderboard {
  leaders: Leader[];
  /** The SOL/USD price of the last refresh. */
  sol_usd: number | null;
  /** When the last refresh read the chain. */
  priced_at: number | null;
  computed_at: number;
}

export interface LeaderboardOptions {
  /** How long a computed board is served (default LEADERBOARD_TTL_MS). */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The top citizens by portfolio value, then karma, from the portfolio read model the workers' pricing refresher
 * keeps (`chain_cache.portfolios`), computed at most once per `ttlMs` per process; concurrent readers share one
 * computation. The API makes no RPC call for it, so the chain sees one refresh per period however many API
 * processes run.
 */
export class LeaderboardCache {
  readonly ttlMs: number;
  private readonly now: () => number;
  private current?: { at: number; value: Promise<Leaderboard> };

  constructor(
    private readonly db: Kysely<any>,
    private readonly readModelSchema: string,
    options: LeaderboardOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? LEADERBOARD_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  get(): Promise<Leaderboard> {
    const now = this.now();
    if (this.current && now - this.current.at < this.ttlMs) return this.current.value;
    const value = this.compute(now);
    this.current = { at: now, value };
    value.catch(() => {
      if (this.current?.value === value) this.current = undefined;
    });
    return value;
  }

  private async compute(now: number): Promise<Leaderboard> {
    const store = await PortfolioStore.forDatabase(this.db);
    const [priced, last] = await Promise.all([store.ranked(LEADERS), store.lastRefresh()]);
    // Fewer priced than the board holds: all of them are here, and citizens registered since the last refresh follow.
    const unpriced = priced.length < LEADERS ? await agents.byKarma(this.db, this.readModelSchema, { except: priced.map((p) => p.agent_id), limit: LEADERS - priced.length }) : [];
    const unranked: Array<Omit<Leader, 'rank'>> = [
      ...priced.map((p) => ({
        agent: { id: p.agent_id, handle: p.handle, wallet: p.wallet },
        karma: p.karma,
        sol: p.sol,
        tokens_sol: p.tokens_sol,
        portfolio_sol: p.portfolio_sol,
        portfolio_usd: p.portfolio_usd,
        holdings: p.holdings,
        priced_at: p.priced_at,
      })),
      ...unpriced.map((a) => ({
        agent: { id: a.id, handle: a.handle, wallet: a.wallet },
        karma: a.karma,
        sol: null,
        tokens_sol: null,
        portfolio_sol: null,
        portfolio_usd: null,
        holdings: null,
        priced_at: null,
      })),
    ];
    return {
      leaders: unranked.map((leader, i) => ({ rank: i + 1, ...leader })),
      sol_usd: last?.sol_usd ?? null,
      priced_at: last?.priced_at ?? null,
      computed_at: now,
    };
  }
}
