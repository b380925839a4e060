import type { Kysely } from 'kysely';
import { SolanaJSONRPCError } from '@solana/web3.js';
import { isRpcUnreachable, readMarketStates, type MarketState } from '@svc/chain';
import { MarketStore, marketView, type MarketView } from '@svc/marketdata';
import type { Services } from '../services';

/**
 * A cached figure older than this is read again by whoever asks. The workers' refresher keeps service coins
 * and mints asked about far younger; this bounds what a reader sees when no refresher runs.
 */
export const MARKET_MAX_AGE_MS = 30_000;
/** A bought-out curve graduates within moments, by no action on the ledger: such a figure is read again sooner. */
const AWAITING_MIGRATION_MAX_AGE_MS = 2_000;

function current(row: MarketView | undefined, lastActionSeq: number, now: number): row is MarketView {
  if (!row || row.ledger_seq < lastActionSeq) return false;
  return now - row.updated_at < (row.status === 'graduating' ? AWAITING_MIGRATION_MAX_AGE_MS : MARKET_MAX_AGE_MS);
}

/** A mint to price, and the ledger position of the last action that named it (-1: none). */
export interface WantedMarket {
  mint: string;
  lastActionSeq: number;
}

export interface CurrentMarkets {
  /** By mint: its market, or null when the chain says it is no mint. Absent: unknown (the chain could not be read). */
  markets: Map<string, MarketView | null>;
  /** Set when some figures could not be read from the chain (the cached ones, if any, stand in). */
  unreachable?: unknown;
}

/** A chain read in flight for one mint, and the ledger position it includes. */
interface Reading {
  ledgerSeq: number;
  done: Promise<MarketView | null>;
}

const inFlight = new WeakMap<Kysely<any>, Map<string, Reading>>();

/**
 * The markets of `wanted`, from the cache when a figure is current: it includes the mint's last action on the
 * ledger and is younger than MARKET_MAX_AGE_MS. The others are read from the chain now, in one batched read
 * (concurrent requests for a mint share one that includes what they need), and cached. So a page right after
 * a trade shows the trade, and otherwise a request costs no RPC call. `requested` marks the mints as asked
 * about, which keeps them in the refresher's pass for a while.
 */
export async function currentMarkets(services: Services, wanted: WantedMarket[], options: { requested?: boolean } = {}): Promise<CurrentMarkets> {
  const { db } = services.database;
  const store = await MarketStore.forDatabase(db);
  const now = Date.now();
  const cached = await store.findMany(wanted.map((w) => w.mint));
  const markets = new Map<string, MarketView | null>();
  const stale: WantedMarket[] = [];
  for (const w of wanted) {
    const row = cached.get(w.mint);
    if (current(row, w.lastActionSeq, now)) markets.set(w.mint, row);
    else stale.push(w);
  }
  if (options.requested) await store.touch([...markets.keys()], now);
  if (stale.length === 0) return { markets };
  const pending = inFlight.get(db) ?? new Map<string, Reading>();
  inFlight.set(db, pending);
  const readings = new Map<string, Reading>();
  for (const w of stale) {
    const shared = pending.get(w.mint);
    if (shared && shared.ledgerSeq >= w.lastActionSeq) readings.set(w.mint, shared);
  }
  const toRead = stale.map((w) => w.mint).filter((mint) => !readings.has(mint));
  if (toRead.length > 0) {
    // Every action up to here confirmed before it was recorded: a read that starts now includes them all.
    const ledgerSeq = Math.max(services.projection.positionOf(['tokens', 'agent_mints']), ...stale.map((w) => w.lastActionSeq));
    const read = readMarketStates(services.chain.connection, toRead).then(async (found) => {
      const stamp = { slot: found.slot, ledgerSeq, at: Date.now(), requested: options.requested };
      await store.save([...found.states.values()].filter((s): s is MarketState => s !== null), stamp);
      return { found, stamp };
    });
    for (const mint of toRead) {
      const reading: Reading = {
        ledgerSeq,
        done: read.then(({ found, stamp }) => {
          const state = found.states.get(mint);
          return state ? marketView(state, stamp) : null;
        }),
      };
      readings.set(mint, reading);
      pending.set(mint, reading);
      void reading.done.catch(() => undefined).finally(() => pending.get(mint) === reading && pending.delete(mint));
    }
  }
  let unreachable: unknown;
  await Promise.all(
    stale.map(async (w) => {
      try {
        markets.set(w.mint, await readings.get(w.mint)!.done);
      } catch (error) {
        if (!isRpcUnreachable(error) && !(error instanceof SolanaJSONRPCError)) throw error;
        unreachable = error;
        const row = cached.get(w.mint);
        if (row) markets.set(w.mint, row);
      }
    }),
  );
  return { markets, unreachable };
}
