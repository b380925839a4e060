import { Connection } from '@solana/web3.js';

export const WRAPPED_SOL_MINT = 'So11111111111111111111111111111111111111112';
const PRICE_TTL_MS = 60_000;
/** How long a last known price stands in while the price source fails or is slow to answer. */
const PRICE_STALE_MS = 5 * 60_000;

export interface ChainOptions {
  /** Solana JSON-RPC; its WebSocket is the next port (as web3.js assumes) unless `wsUrl` is given. */
  rpcUrl: string;
  /** The RPC's WebSocket (signature subscriptions) when it is not on the next port, e.g. a local chain on free ports. */
  wsUrl?: string;
  /** Jupiter-compatible price API base; unset = prices are unknown (null). */
  priceUrl?: string;
  fetch?: typeof fetch;
}

/** The service's one way to Solana: web3.js over JSON-RPC, and a Jupiter-compatible price API. */
export class SolanaChain {
  readonly connection: Connection;
  /** The last price the source gave, and when. */
  private lastPrice?: { at: number; value: number };
  /** The lookup in flight, and when it started. */
  private lookup?: { at: number; value: Promise<number | null> };

  constructor(readonly options: ChainOptions) {
    this.connection = new Connection(options.rpcUrl, { commitment: 'confirmed', wsEndpoint: options.wsUrl });
  }

  /**
   * SOL/USD, looked up at most once a minute, one lookup at a time; null when no price API is configured,
   * or it has not answered for five minutes. While a lookup is in flight or failing, callers get the last
   * known price at once rather than waiting on a slow source; a failed lookup is tried again by the next
   * caller.
   */
  solUsd(now = Date.now()): Promise<number | null> {
    const last = this.lastPrice;
    if (last && now - last.at < PRICE_TTL_MS) return Promise.resolve(last.value);
    if (!this.lookup) {
      const lookup = { at: now, value: this.fetchSolUsd() };
      this.lookup = lookup;
      void lookup.value.then((value) => {
        if (value !== null) this.lastPrice = { at: lookup.at, value };
        if (this.lookup === lookup) this.lookup = undefined;
      });
    }
    if (last && now - last.at < PRICE_STALE_MS) return Promise.resolve(last.value);
    return this.lookup!.value;
  }

  private async fetchSolUsd(): Promise<number | null> {
    const base = this.options.priceUrl;
    if (!base) return null;
    try {
      const res = await (this.options.fetch ?? fetch)(`${base.replace(/\/+$/, '')}/price/v3?ids=${WRAPPED_SOL_MINT}`, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) return null;
      const body = (await res.json()) as Record<string, { usdPrice?: unknown } | undefined>;
      const price = Number(body[WRAPPED_SOL_MINT]?.usdPrice);
      return Number.isFinite(price) && price > 0 ? price : null;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    // web3.js opens its WebSocket only for subscriptions and keeps reconnecting it; closing it (and its
    // idle timer) keeps a stopping process from hanging.
    const internals = this.connection as unknown as {
      _rpcWebSocket?: { close(): void; setAutoReconnect?(on: boolean): void; socket?: { readyState: number }; once?(event: string, fn: () => void): void };
      _rpcWebSocketIdleTimeout?: NodeJS.Timeout | null;
    };
    const ws = internals._rpcWebSocket;
    if (internals._rpcWebSocketIdleTimeout) clearTimeout(internals._rpcWebSocketIdleTimeout);
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
