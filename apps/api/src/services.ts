import { projections } from '@svc/projections';
import type { Runtime } from '@svc/runtime';
import { Metrics } from './metrics';
import { ProjectionWatcher } from './projectionWatcher';
import { BOARD_READS, readBoard } from './live/board';
import { PulseHub } from './live/pulseHub';
import { LeaderboardCache } from './society/leaderboard';

/** What routes and commands work with: the process's runtime plus the parts only the API has. */
export interface Services extends Runtime {
  metrics: Metrics;
  projection: ProjectionWatcher;
  leaderboard: LeaderboardCache;
  pulse: PulseHub;
}

/**
 * Attaches the API's parts to the runtime itself rather than to a copy, so that a chain swapped on one
 * (the bundled chain, a test's) is the chain of both.
 */
export function buildServices(runtime: Runtime): Services {
  const { bus, database, config } = runtime;
  const metrics = new Metrics();
  runtime.onLedgerBatch((commands, entries) => metrics.ledgerBatch(commands, entries));
  metrics.watchBus(bus);
  const projection = new ProjectionWatcher(
    bus,
    database.db,
    config.readModelSchema,
    projections.map((p) => p.name),
    config.checkpointPollMs,
  );
  const board = projection.follower(BOARD_READS);
  const services: Services = Object.assign(runtime, {
    metrics,
    projection,
    leaderboard: new LeaderboardCache(database.db, config.readModelSchema),
    pulse: new PulseHub(bus, () => readBoard(database.db, config.readModelSchema), () => board.seq, board),
  });
  return services;
}
