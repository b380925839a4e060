import { startOutboxRecovery } from '@svc/actions';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate } from '@svc/readmodel';
import type { Runtime } from '@svc/runtime';
import { startDoorbellWorker, type DoorbellWorkerTuning, type RunningDoorbellWorker } from './doorbellWorker';
import { startMarketRefresher, type MarketRefresherTuning, type RunningMarketRefresher } from './markets';
import { startPortfolioRefresher, type PortfolioRefresherTuning, type RunningPortfolioRefresher } from './portfolios';
import { startTreasuryWorker, type RunningTreasury, type TreasuryTuning } from './treasury';

export interface WorkersOptions {
  doorbellWorker?: DoorbellWorkerTuning;
  /** How often the on-chain outbox is settled after the pass at start (default OUTBOX_RECOVERY_MS). */
  outboxRecoveryEveryMs?: number;
  markets?: MarketRefresherTuning;
  portfolios?: PortfolioRefresherTuning;
  treasury?: TreasuryTuning;
}

export interface RunningWorkers {
  doorbells: RunningDoorbellWorker;
  /** Keeps the chain's market figures of service coins (and mints asked about) fresh. */
  markets: RunningMarketRefresher;
  /** Prices every citizen's SOL and holdings for the leaderboard. */
  portfolios: RunningPortfolioRefresher;
  /** The treasury's buyback-and-burn cycles. */
  treasury: RunningTreasury;
  stop(): Promise<void>;
}

/**
 * Every background loop of the service, on the process's runtime: `npm run start:workers` runs them
 * alone, `npm start` beside the API. Any number of processes may run them at once.
 */
export async function startWorkers(runtime: Runtime, options: WorkersOptions = {}): Promise<RunningWorkers> {
  const { config, log } = runtime;
  // The doorbell fan-out reads the projector's `entries`; whichever process starts first creates the read models.
  await migrate(runtime.database.db, config.readModelSchema, readModelMigrations(projections));
  const doorbells = await startDoorbellWorker({
    store: runtime.doorbells,
    bus: runtime.bus,
    log,
    allowLoopback: config.doorbellAllowLoopback,
    caFile: config.doorbellCaFile,
    ...options.doorbellWorker,
  });
  // Confirmed transactions that a crashed or failed request left unrecorded are recorded; the rest freed.
  const outboxRecovery = startOutboxRecovery(runtime.pipeline, log, options.outboxRecoveryEveryMs ?? config.outboxRecoveryMs);
  const markets = await startMarketRefresher({
    db: runtime.database.db,
    readModelSchema: config.readModelSchema,
    chain: () => runtime.chain,
    bus: runtime.bus,
    log,
    ...options.markets,
  }).catch(async (error) => {
    await outboxRecovery.stop();
    await doorbells.stop();
    throw error;
  });
  const portfolios = await startPortfolioRefresher({
    db: runtime.database.db,
    readModelSchema: config.readModelSchema,
    chain: () => runtime.chain,
    log,
    ...options.portfolios,
  }).catch(async (error) => {
    await markets.stop();
    await outboxRecovery.stop();
    await doorbells.stop();
    throw error;
  });
  const treasury = await startTreasuryWorker(runtime, options.treasury).catch(async (error) => {
    await portfolios.stop();
    await markets.stop();
    await outboxRecovery.stop();
    await doorbells.stop();
    throw error;
  });
  return {
    doorbells,
    markets,
    portfolios,
    treasury,
    async stop() {
      await treasury.stop();
      await portfolios.stop();
      await markets.stop();
      await outboxRecovery.stop();
      await doorbells.stop();
    },
  };
}
