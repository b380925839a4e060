import type { Connection } from '@solana/web3.js';
import { Aggregator } from './venues/aggregator';
import { PoolWatch } from './venues/graduation';
import { rpcFetch } from './rpcFetch';
import { ServiceConnection } from './serviceConnection';

export const WRAPPED_SOL_MINT = 'So11111111111111111111111111111111111111112';
const PRICE_TTL_MS = 60_000;
/** How long a last known price stands in while the price source fails or is slow to answer. */
const PRICE_STALE_MS = 5 * 60_000;
/** How long one answer of `reachable` stands: readiness probes, however often they come, ask the RPC at most this often. */
const PROBE_TTL_MS = 5_000;
/** How long `reachable` waits for the RPC: a readiness probe answers quickly whatever the chain does. */
const PROBE_TIMEOUT_MS = 1_000;

export interface ChainOptions {
  /** Solana JSON-RPC; its WebSocket is the next port (as web3.js assumes) unless `wsUrl` is given. */
  rpcUrl: string;
  /** The RPC's WebSocket (signature subscriptions) when it is not on the next port, e.g. a local chain on free ports. */
  wsUrl?: string;
  /** Jupiter-compatible price API base; unset = prices are unknown (null). */
  priceUrl?: string;
  /** Jupiter-compatible swap API base, for mints neither pump venue trades. */
  jupiterUrl?: string;
  fetch?: typeof fetch;
}

/** Jupiter's Price API V3 takes at most this many ids a request. */
const PRICE_IDS_PER_REQUEST = 50;
/** Mints whose prices are remembered; the least recently priced go first. */
const PRICES_KEPT = 10_000;

/** A price the source gave (null: it answered, and has no price for the mint), and when it was asked. */
interface KnownPrice {
  at: number;
  value: number | null;
}

/** The WebSocket web3.js opens for subscriptions, as far as closing it goes. */
interface RpcWebSocket {
  close(): void;
  setAutoReconnect?(on: boolean): void;
  socket?: { readyState: number };
  once?(event: string, fn: () => void): void;
}

/** The service's one way to Solana: web3.js over JSON-RPC, and a Jupiter-compatible price API. */
export class SolanaChain {
  readonly connection: Connection;
  /** By mint: the last answer the price source gave. */
  private readonly prices = new Map<string, KnownPrice>();
  /** By mint: the lookup in flight; it settles once `prices` holds its answer (or it failed). */
  private readonly lookups = new Map<string, Promise<void>>();
  /** The last reachability probe, from when it was asked; in flight or answered, callers share it. */
  private probe?: { at: number; answer: Promise<boolean> };
  /** The cluster's genesis hash, asked once: it never changes behind one RPC URL. */
  private genesis?: Promise<string>;

  /** The aggregator behind `jupiter` trades and swaps. */
  readonly aggregator: Aggregator;
  /** What trades on graduating coins wait on for their pools. */
  readonly pools: PoolWatch;

  constructor(readonly options: ChainOptions) {
    this.connection = new ServiceConnection(options.rpcUrl, { commitment: 'confirmed', wsEndpoint: options.wsUrl, fetch: rpcFetch });
    this.aggregator = new Aggregator(options.jupiterUrl ?? options.rpcUrl, options.fetch);
    this.pools = new PoolWatch(this.connection);
  }

  /**
   * Whether the RPC answers a cheap call (`getSlot`) within PROBE_TIMEOUT_MS, asked at most once per
   * PROBE_TTL_MS: callers in between, and while it is asked, get the same answer. Never throws.
   */
  reachable(now = Date.now()): Promise<boolean> {
    if (this.probe && now - this.probe.at < PROBE_TTL_MS) return this.probe.answer;
    this.probe = { at: now, answer: this.answersSlot() };
    return this.probe.answer;
  }

  private async answersSlot(): Promise<boolean> {
    try {
      const res = await (this.options.fetch ?? fetch)(this.options.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }),
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      if (!res.ok) return false;
      const body = (await res.json()) as { result?: unknown } | null;
      return typeof body?.result === 'number';
    } catch {
      return false;
    }
  }

  /** Which cluster the RPC serves, by its genesis hash: asked once, and again only after an ask that failed. */
  genesisHash(): Promise<string> {
    if (!this.genesis) {
      const asked = this.connection.getGenesisHash();
      this.genesis = asked;
      asked.catch(() => {
        if (this.genesis === asked) this.genesis = undefined;
      });
    }
    return this.genesis;
  }

  /** SOL/USD, as usdPrices prices any mint (SOL is wrapped SOL's mint). */
  async solUsd(now = Date.now()): Promise<number | null> {
    return (await this.usdPrices([WRAPPED_SOL_MINT], now)).get(WRAPPED_SOL_MINT) ?? null;
  }

  /**
   * USD prices of whole tokens by mint, each looked up at most once a minute, one lookup at a time, and all
   * the mints due in one request (50 ids each). A price is null when no price API is configured, when the
   * source has no price for the mint, or when it has not answered for five minutes. While a lookup is in
   * flight or failing, callers get the last known price at once rather than waiting on a slow source; a
   * failed lookup is tried again by the next caller. Never throws.
   */
  async usdPrices(mints: Iterable<string>, now = Date.now()): Promise<Map<string, number | null>> {
    const wanted = [...new Set(mints)];
    const due = wanted.filter((mint) => {
      const known = this.prices.get(mint);
      return !(known && now - known.at < PRICE_TTL_MS) && !this.lookups.has(mint);
    });
    for (let i = 0; i < due.length; i += PRICE_IDS_PER_REQUEST) this.lookUp(due.slice(i, i + PRICE_IDS_PER_REQUEST), now);
    const usable = (mint: string) => {
      const known = this.prices.get(mint);
      return known && now - known.at < PRICE_STALE_MS ? known : undefined;
    };
    await Promise.all(wanted.filter((mint) => !usable(mint)).map((mint) => this.lookups.get(mint)));
    return new Map(wanted.map((mint) => [mint, usable(mint)?.value ?? null]));
  }

  private lookUp(mints: string[], at: number): void {
    const done = this.fetchUsdPrices(mints).then((found) => {
      for (const mint of mints) {
        if (this.lookups.get(mint) === done) this.lookups.delete(mint);
        if (!found) continue;
        this.prices.delete(mint);
        this.prices.set(mint, { at, value: found.get(mint) ?? null });
      }
      for (const mint of this.prices.keys()) {
        if (this.prices.size <= PRICES_KEPT) break;
        this.prices.delete(mint);
      }
    });
    for (const mint of mints) this.lookups.set(mint, done);
  }

  /** The source's prices for `mints` (a mint it cannot price is absent), or undefined when it did not answer. */
  private async fetchUsdPrices(mints: string[]): Promise<Map<string, number> | undefined> {
    const base = this.options.priceUrl;
    if (!base) return new Map();
    try {
      const res = await (this.options.fetch ?? fetch)(`${base.replace(/\/+$/, '')}/price/v3?ids=${mints.join(',')}`, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) return undefined;
      const body = (await res.json()) as Record<string, { usdPrice?: unknown } | null | undefined> | null;
      if (!body || typeof body !== 'object') return undefined;
      const found = new Map<string, number>();
      for (const mint of mints) {
        const price = Number(body[mint]?.usdPrice);
        if (Number.isFinite(price) && price > 0) found.set(mint, price);
      }
      return found;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    // web3.js opens its WebSocket only for subscriptions and keeps reconnecting it; closing it (and its
    // idle timer) keeps a stopping process from hanging.
    // Fields web3.js keeps but does not declare, read as what they hold.
    const ws: RpcWebSocket | undefined = Reflect.get(this.connection, '_rpcWebSocket');
    const idleTimer: NodeJS.Timeout | null | undefined = Reflect.get(this.connection, '_rpcWebSocketIdleTimeout');
    if (idleTimer) clearTimeout(idleTimer);
    ws?.setAutoReconnect?.(false);
    if (ws?.socket && ws.socket.readyState <= 1 && ws.once) {
      const closed = new Promise<void>((resolve) => ws.once!('close', resolve));
      ws.close();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } else {
      ws?.close();
    }
  }
}
