import { SingleBar, Presets } from 'cli-progress';
import { loadConfig } from '@svc/config';
import { LEDGER_STREAM } from '@svc/ledger';
import { REBUILD_BATCH, projections, rebuildReadModels, type RebuildPhase } from '@svc/projections';
import { openBus, openStorage } from '@svc/runtime';

const PHASES: Record<RebuildPhase, string> = { load: 'loading', index: 'indexing', tail: 'catching up', swap: 'swapping' };

/**
 * `npm run replay`: rebuilds every read model from seq 0, side by side with the live ones, and swaps
 * when caught up. With the embedded database (PGlite) stop the service first: PGlite has one writer.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const storage = await openStorage(config, 'svc-replay');
  const { database, store } = storage;
  const bus = openBus(config);
  const head = await store.headRevision(LEDGER_STREAM);
  const bar = new SingleBar({ format: 'replay {phase} |{bar}| {percentage}% | seq {value}/{total} | {eta_formatted} left', etaBuffer: 50 }, Presets.shades_classic);
  bar.start(head + 1, 0, { phase: PHASES.load });
  const started = Date.now();
  const at = await rebuildReadModels({
    database,
    store,
    projections,
    schema: config.readModelSchema,
    bus,
    batchSize: Math.max(config.projectorBatchSize, REBUILD_BATCH),
    onProgress: (seq) => bar.update(Math.min(seq + 1, head + 1)),
    onPhase: (phase) => bar.update({ phase: PHASES[phase] }),
  });
  bar.update(head + 1);
  bar.stop();
  console.log(`read models rebuilt to seq ${at} (${at + 1} entries) in ${((Date.now() - started) / 1000).toFixed(1)} s; schema "${config.readModelSchema}" swapped`);
  await bus.close();
  await storage.close();
}

main().catch((error) => {
  console.error('replay failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
