import { PublicKey } from '@solana/web3.js';
import type { Kysely } from 'kysely';
import type { SolanaChain } from '@svc/chain';

export const LEADERBOARD_TTL_MS = 60_000;
const LEADERS = 100;
const ACCOUNTS_PER_CALL = 100;

export interface Leader {
  rank: number;
  agent: { id: string; handle: string; wallet: string };
  karma: number;
  sol: number | null;
  portfolio_usd: number | null;
}

export interface Leaderboard {
  leaders: Leader[];
  sol_usd: number | null;
  computed_at: number;
}

/**
 * Citizens by portfolio value, then karma, computed at most once a minute per process (concurrent
 * readers share one computation). The value is the wallet's SOL at the SOL/USD price; priced token
 * holdings join once trading lands. With the chain unreachable, the ranking is by karma alone.
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
    const [balances, solUsd] = await Promise.all([this.balances(chain, rows.map((r) => r.wallet)), chain.solUsd()]);
    const ranked = rows.map((row, i) => {
      const sol = balances ? balances[i]! : null;
      return {
        agent: { id: row.agent_id, handle: row.handle, wallet: row.wallet },
        karma: Number(row.karma),
        sol,
        portfolio_usd: sol !== null && solUsd !== null ? Math.round(sol * solUsd * 100) / 100 : null,
        seq: Number(row.registered_seq),
      };
    });
    ranked.sort((a, b) => (b.sol ?? 0) - (a.sol ?? 0) || b.karma - a.karma || a.seq - b.seq);
    return {
      leaders: ranked.slice(0, LEADERS).map(({ seq: _seq, ...leader }, i) => ({ rank: i + 1, ...leader })),
      sol_usd: solUsd,
      computed_at: now,
    };
  }

  private async balances(chain: SolanaChain, wallets: string[]): Promise<number[] | null> {
    try {
      const out: number[] = [];
      for (let i = 0; i < wallets.length; i += ACCOUNTS_PER_CALL) {
        const keys = wallets.slice(i, i + ACCOUNTS_PER_CALL).map((w) => new PublicKey(w));
        const infos = await chain.connection.getMultipleAccountsInfo(keys);
        for (const info of infos) out.push((info?.lamports ?? 0) / 1e9);
      }
      return out;
    } catch {
      return null;
    }
  }
}
