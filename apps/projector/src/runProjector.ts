import type { Logger } from 'pino';
import type { Bus } from '@svc/bus';
import type { EventStore } from '@svc/ledger';
import { Projector, projections, type ProjectionName } from '@svc/projections';
import type { SqlDatabase } from '@svc/readmodel';

export interface RunningProjector {
  projector: Projector;
  stop(): Promise<void>;
}

/** Starts following the ledger; used by the projector process and by the single-process start. */
export async function startProjector(options: {
  database: SqlDatabase;
  store: EventStore;
  bus: Bus;
  schema: string;
  batchSize: number;
  log: Logger;
}): Promise<RunningProjector> {
  const projector = await new Projector({ ...options, projections, leading: ['entries'] satisfies ProjectionName[], log: options.log }).init();
  const controller = new AbortController();
  const done = projector.run(controller.signal).catch((err) => options.log.error({ err }, 'projector stopped'));
  options.log.info({ checkpoint: projector.position, checkpoints: Object.fromEntries(projector.checkpoints) }, 'projector following the ledger');
  return {
    projector,
    async stop() {
      controller.abort();
      await done;
    },
  };
}
