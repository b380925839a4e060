import { parseArgs } from 'node:util';
import { SingleBar, Presets } from 'cli-progress';
import { loadConfig } from '@svc/config';
import { LEDGER_STREAM } from '@svc/ledger';
import { REBUILD_BATCH, isProjectionName, projections, rebuildOneReadModel, rebuildReadModels, type RebuildPhase } from '@svc/projections';
import { openBus, openStorage } from '@svc/runtime';

const PHASES: Record<RebuildPhase, string> = { load: 'loading', index: 'indexing', tail: 'catching up', swap: 'swapping' };

/**
 * `npm run replay`: rebuilds every read model from seq 0, side by side with the live ones, and swaps
 * when caught up. `npm run replay -- --only <name>` rebuilds that one read model the same way and swaps its
 * tables in, while the others keep serving and following the ledger. With the embedded database (PGlite) stop
 * the service first: PGlite has one writer.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const only = values.only;
  if (only !== undefined && !isProjectionName(only)) {
    throw new Error(`--only takes the name of a read model: ${projections.map((p) => p.name).join(', ')}`);
  }
  const config = loadConfig();
  const storage = await openStorage(config, 'svc-replay');
  const { database, store } = storage;
  const bus = openBus(config);
  const head = await store.headRevision(LEDGER_STREAM);
  const bar = new SingleBar({ format: 'replay {phase} |{bar}| {percentage}% | seq {value}/{total} | {eta_formatted} left', etaBuffer: 50 }, Presets.shades_classic);
  bar.start(head + 1, 0, { phase: PHASES.load });
  const started = Date.now();
  const options = {
    database,
    store,
    schema: config.readModelSchema,
    bus,
    batchSize: Math.max(config.projectorBatchSize, REBUILD_BATCH),
    onProgress: (seq: number) => bar.update(Math.min(seq + 1, head + 1)),
    onPhase: (phase: RebuildPhase) => bar.update({ phase: PHASES[phase] }),
  };
  const projection = projections.find((p) => p.name === only);
  const at = projection ? await rebuildOneReadModel({ ...options, projection }) : await rebuildReadModels({ ...options, projections });
  bar.update(head + 1);
  bar.stop();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (projection) console.log(`read model ${projection.name} rebuilt to seq ${at} (${at + 1} entries) in ${seconds} s; its tables swapped into schema "${config.readModelSchema}"`);
  else console.log(`read models rebuilt to seq ${at} (${at + 1} entries) in ${seconds} s; schema "${config.readModelSchema}" swapped`);
  await bus.close();
  await storage.close();
}

main().catch((error) => {
  console.error('replay failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
