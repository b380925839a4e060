import { projections, readModelMigrations } from '@svc/projections';
import { migrate } from '@svc/readmodel';
import type { Runtime } from '@svc/runtime';
import { startAnchorWorker, type RunningAnchors } from './anchors';
import { IDEMPOTENCY_PURGE_EVERY_MS } from '@svc/vault';
import { startDeployTableWorker, type DeployTableTuning, type RunningDeployTable } from './deployTable';
import { startDoorbellWorker, type DoorbellWorkerTuning, type RunningDoorbellWorker } from './doorbellWorker';
import { WorkerLoop } from './loop';
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
  deployTable?: DeployTableTuning;
  /** How often the anchor runner looks whether an anchor is due (5 s). */
  anchors?: { everyMs?: number };
  /** How often expired Idempotency-Key rows are purged (default IDEMPOTENCY_PURGE_EVERY_MS). */
  idempotencyPurgeEveryMs?: number;
}

export interface RunningWorkers {
  doorbells: RunningDoorbellWorker;
  /** Keeps the chain's market figures of service coins (and mints asked about) fresh. */
  markets: RunningMarketRefresher;
  /** Prices every citizen's SOL and holdings for the leaderboard. */
  portfolios: RunningPortfolioRefresher;
  /** The treasury's buyback-and-burn cycles. */
  treasury: RunningTreasury;
  /** Makes the deploy lookup table once the treasury can pay for it. */
  deployTable: RunningDeployTable;
  /** Commits the ledger head to Solana every ANCHOR_EVERY_ENTRIES entries or ANCHOR_INTERVAL_MS. */
  anchors: RunningAnchors;
  stop(): Promise<void>;
}

/**
 * Every background loop of the service, on the process's runtime: `npm run start:workers` runs them
 * alone, `npm start` beside the API. Any number of processes may run them at once. Each runs on a WorkerLoop.
 */
export async function startWorkers(runtime: Runtime, options: WorkersOptions = {}): Promise<RunningWorkers> {
  const { config, log } = runtime;
  // The doorbell fan-out reads the projector's `entries`; whichever process starts first creates the read models.
  await migrate(runtime.database.db, config.readModelSchema, readModelMigrations(projections));
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAll = async () => {
    for (const worker of started.splice(0).reverse()) await worker.stop();
  };
  const start = async <T extends { stop(): Promise<void> }>(worker: Promise<T>): Promise<T> => {
    const running = await worker.catch(async (error) => {
      await stopAll();
      throw error;
    });
    started.push(running);
    return running;
  };
  const doorbells = await start(
    startDoorbellWorker({
      store: runtime.doorbells,
      bus: runtime.bus,
      log,
      allowLoopback: config.doorbellAllowLoopback,
      caFile: config.doorbellCaFile,
      ...options.doorbellWorker,
    }),
  );
  await start(startOutboxRecovery(runtime, options.outboxRecoveryEveryMs ?? config.outboxRecoveryMs));
  await start(startIdempotencyPurge(runtime, options.idempotencyPurgeEveryMs ?? IDEMPOTENCY_PURGE_EVERY_MS));
  const chainReaders = { db: runtime.database.db, readModelSchema: config.readModelSchema, chain: () => runtime.chain, log };
  const markets = await start(startMarketRefresher({ ...chainReaders, bus: runtime.bus, ...options.markets }));
  const portfolios = await start(startPortfolioRefresher({ ...chainReaders, ...options.portfolios }));
  const treasury = await start(startTreasuryWorker(runtime, options.treasury));
  const deployTable = await start(startDeployTableWorker(runtime, options.deployTable));
  const anchors = await start(startAnchorWorker(runtime, options.anchors));
  return { doorbells, markets, portfolios, treasury, deployTable, anchors, stop: stopAll };
}

/**
 * Settles the on-chain outbox at start and every `everyMs`: confirmed transactions that a crashed or failed
 * request left unrecorded are recorded; the rest freed.
 */
async function startOutboxRecovery(runtime: Runtime, everyMs: number): Promise<WorkerLoop> {
  const { log } = runtime;
  const loop = new WorkerLoop({
    name: 'outbox recovery',
    log,
    retryMs: everyMs,
    async pass(signal) {
      const settled = await runtime.pipeline.recover(signal);
      if (settled.length > 0) log.info({ settled }, 'outbox recovery pass');
      return everyMs;
    },
  });
  await loop.start();
  return loop;
}

/**
 * Forgets Idempotency-Key rows past keeping and the secrets of replies past showing them, at start and every
 * `everyMs`, whether or not requests come: a quiet service would otherwise keep them for ever.
 */
async function startIdempotencyPurge(runtime: Runtime, everyMs: number): Promise<WorkerLoop> {
  const { log } = runtime;
  const loop = new WorkerLoop({
    name: 'idempotency purge',
    log,
    retryMs: everyMs,
    async pass() {
      const { purged, secretsForgotten } = await runtime.vault.idempotency.purge();
      if (purged + secretsForgotten > 0) log.debug({ purged, secrets_forgotten: secretsForgotten }, 'idempotency purge');
      return everyMs;
    },
  });
  await loop.start();
  return loop;
}
