import { EventEmitter } from 'node:events';
import type { Connection, PublicKey } from '@solana/web3.js';
import { canonicalPumpPoolPda } from '@pump-fun/pump-sdk';
import { ChainError } from '../errors';
import type { Aggregator } from './aggregator';
import { graduating, readMarket } from './market';
import { isPumpPool } from './pumpAmm';
import type { Venue } from './venue';

/**
 * How often a watch also reads the pool account. The subscription is what wakes a waiter; this read covers a pool
 * created before the subscription took effect, a lost notification, or an RPC without a WebSocket, at one call a
 * second per mint however many callers wait.
 */
const POOL_POLL_MS = 1_000;

interface Watch {
  appeared: Promise<void>;
  waiters: number;
  stop(): void;
}

/**
 * Waits for the canonical PumpSwap pools of graduating coins to appear: one account subscription over the RPC's
 * WebSocket per mint (plus a read a second), shared by every caller waiting on that mint, and dropped when the last
 * one stops. Emits `waiting` with the mint as a caller starts to wait.
 */
export class PoolWatch extends EventEmitter<{ waiting: [mint: string] }> {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly connection: Connection) {
    super();
    this.setMaxListeners(0);
  }

  /** True once `mint`'s canonical PumpSwap pool exists, false if it did not within `ms`. */
  async appears(mint: PublicKey, ms: number): Promise<boolean> {
    const key = mint.toBase58();
    const watch = this.watches.get(key) ?? this.watch(key, canonicalPumpPoolPda(mint));
    watch.waiters++;
    this.emit('waiting', key);
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([watch.appeared.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)))]);
    } finally {
      clearTimeout(timer);
      if (--watch.waiters === 0) {
        watch.stop();
        this.watches.delete(key);
      }
    }
  }

  private watch(key: string, pool: PublicKey): Watch {
    let found!: () => void;
    const appeared = new Promise<void>((resolve) => (found = resolve));
    const subscription = this.connection.onAccountChange(pool, (info) => isPumpPool(info) && found(), { commitment: 'confirmed' });
    const look = () =>
      this.connection.getAccountInfo(pool, 'confirmed').then(
        (info) => isPumpPool(info) && found(),
        () => undefined,
      );
    const poll = setInterval(look, POOL_POLL_MS);
    void look();
    const watch: Watch = {
      appeared,
      waiters: 0,
      stop: () => {
        clearInterval(poll);
        this.connection.removeAccountChangeListener(subscription).catch(() => undefined);
      },
    };
    this.watches.set(key, watch);
    return watch;
  }
}

/**
 * readMarket for a trade: a coin between its curve and its pool is waited for, up to `waitMs`, and then trades on
 * its pool. Still without one, the refusal is `graduating`, with a retry hint as long as the wait was.
 */
export async function readMarketAwaitingPool(
  connection: Connection,
  aggregator: Aggregator,
  pools: PoolWatch,
  mint: PublicKey,
  user: PublicKey,
  waitMs: number,
): Promise<Venue> {
  try {
    return await readMarket(connection, aggregator, mint, user);
  } catch (error) {
    if (!isGraduating(error)) throw error;
  }
  if (waitMs <= 0 || !(await pools.appears(mint, waitMs))) throw graduating(mint, waitMs);
  // Once: a pool the watch saw and this read did not is an RPC behind another, not a reason to read in a loop.
  return readMarket(connection, aggregator, mint, user).catch((error: unknown) => {
    throw isGraduating(error) ? graduating(mint, waitMs) : error;
  });
}

const isGraduating = (error: unknown) => error instanceof ChainError && error.code === 'graduating';
