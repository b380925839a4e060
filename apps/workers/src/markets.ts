import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { PROJECTED_CHANNEL, type Bus, type Notification } from '@svc/bus';
import { readMarketStates, type MarketState, type SolanaChain } from '@svc/chain';
import { isEntryOf } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import { MarketStore } from '@svc/marketdata';
import { actionDetails, announces, mintsOf, readCheckpoint, tokens } from '@svc/projections';
import { WorkerLoop } from './loop';

/** How often every service coin (and every mint asked about lately) is read again from the chain. */
export const MARKET_REFRESH_MS = 5_000;
/** How long a mint someone asked about (GET /tokens/{mint}) stays in the periodic pass. */
export const MARKET_REQUESTED_WITHIN_MS = 15 * 60_000;
/** Mints per batched read: with the curve and pool beside each, a few 100-key calls. */
const MINTS_PER_READ = 300;
const isAction = isEntryOf('ActionRecorded');

export interface MarketRefresh {
  mints: string[];
  /** The ledger position whose actions the reading includes. */
  ledgerSeq: number;
  slot: number;
  periodic: boolean;
}

/** Knobs with production defaults; tests hook onRefreshed instead of sleeping. */
export interface MarketRefresherTuning {
  everyMs?: number;
  requestedWithinMs?: number;
  /** Called after each reading is saved. */
  onRefreshed?: (refresh: MarketRefresh) => void;
}

export interface MarketRefresherOptions extends MarketRefresherTuning {
  db: Kysely<any>;
  readModelSchema: string;
  chain: () => SolanaChain;
  bus?: Bus;
  log: Logger;
}

export interface RunningMarketRefresher {
  /** Reads these mints from the chain now and saves what it found; resolves once saved. */
  refresh(mints: string[], ledgerSeq?: number): Promise<MarketState[]>;
  /** Runs the periodic pass now (in this process, whoever holds the period's claim). */
  refreshAll(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps `chain_cache.token_markets` fresh: every coin deployed through the service and every mint asked about
 * lately, every `everyMs` (one process per period, by a claim in the database), and at once any mint that an
 * action on the ledger names, as soon as the projector announces it. The readings are batched (see
 * readMarketStates), so a pass over hundreds of coins is a few RPC calls, not one per coin.
 */
export async function startMarketRefresher(options: MarketRefresherOptions): Promise<RunningMarketRefresher> {
  const refresher = new MarketRefresher(options, await new MarketStore(options.db).init());
  await refresher.start();
  return refresher;
}

class MarketRefresher implements RunningMarketRefresher {
  private readonly everyMs: number;
  private readonly requestedWithinMs: number;
  /** Mints named by actions the projector announced, with the ledger position that announced them. */
  private pending = new Map<string, number>();
  private nextPassAt = 0;
  private readonly loop: WorkerLoop;

  constructor(
    private readonly options: MarketRefresherOptions,
    private readonly store: MarketStore,
  ) {
    this.everyMs = options.everyMs ?? MARKET_REFRESH_MS;
    this.requestedWithinMs = options.requestedWithinMs ?? MARKET_REQUESTED_WITHIN_MS;
    this.loop = new WorkerLoop({
      name: 'market refresher',
      log: options.log,
      pass: () => this.loopPass(),
      retryMs: this.everyMs,
      wakeOn: { bus: options.bus, channels: { [PROJECTED_CHANNEL]: (message) => this.noticed(message) } },
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  /** Notes the mints the announced actions name; true when there are any to read. */
  private noticed(message: Notification): boolean {
    // The tokens read model's announcements name each action once, in order; a lane catching up another read
    // model would name old ones again.
    if (!announces(message, ['tokens'])) return false;
    const entries = Array.isArray(message.entries) ? (message.entries as LedgerEntry[]) : [];
    let named = false;
    for (const entry of entries) {
      if (!entry || !isAction(entry)) continue;
      for (const mint of mintsOf(actionDetails(entry))) {
        this.pending.set(mint, Math.max(this.pending.get(mint) ?? -1, message.seq));
        named = true;
      }
    }
    return named;
  }

  /** The mints announced since the last pass, then the periodic pass when its period is due and this process claims it. */
  private async loopPass(): Promise<number> {
    const pending = this.pending;
    this.pending = new Map();
    if (pending.size > 0) await this.refresh([...pending.keys()], Math.max(...pending.values()));
    const now = Date.now();
    if (now >= this.nextPassAt) {
      this.nextPassAt = now + this.everyMs;
      if (await this.store.claimPeriodicPass(this.everyMs, now)) await this.pass(now);
    }
    return Math.max(10, this.nextPassAt - Date.now());
  }

  async refreshAll(): Promise<void> {
    await this.pass(Date.now());
  }

  private async pass(now: number): Promise<void> {
    const { db, readModelSchema } = this.options;
    const ledgerSeq = await readCheckpoint(db, readModelSchema);
    const [service, requested] = await Promise.all([tokens.allMints(db, readModelSchema), this.store.requestedSince(now - this.requestedWithinMs)]);
    const mints = [...new Set([...service, ...requested])];
    for (let i = 0; i < mints.length && !this.loop.stopping; i += MINTS_PER_READ) await this.read(mints.slice(i, i + MINTS_PER_READ), ledgerSeq, true);
  }

  async refresh(mints: string[], ledgerSeq?: number): Promise<MarketState[]> {
    // The ledger position is taken before the chain is read: every action up to it confirmed before it was recorded.
    const seq = ledgerSeq ?? (await readCheckpoint(this.options.db, this.options.readModelSchema));
    const saved: MarketState[] = [];
    for (let i = 0; i < mints.length; i += MINTS_PER_READ) saved.push(...(await this.read(mints.slice(i, i + MINTS_PER_READ), seq, false)));
    return saved;
  }

  private async read(mints: string[], ledgerSeq: number, periodic: boolean): Promise<MarketState[]> {
    if (mints.length === 0) return [];
    const reading = await readMarketStates(this.options.chain().connection, mints);
    const found = [...reading.states.values()].filter((state): state is MarketState => state !== null);
    await this.store.save(found, { slot: reading.slot, ledgerSeq, at: Date.now() });
    try {
      this.options.onRefreshed?.({ mints: found.map((s) => s.mint), ledgerSeq, slot: reading.slot, periodic });
    } catch (error) {
      this.options.log.warn({ err: error }, 'market refresher onRefreshed hook failed');
    }
    return found;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
