import http from 'node:http';
import { loadConfig } from '@svc/config';
import { createLogger, openBus, openStorage } from '@svc/runtime';
import { startProjector } from './runProjector';

/** `npm run start:projector`: the projector alone, with a health port for the orchestrator. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config, 'svc-projector');
  const { database, store, close } = await openStorage(config, 'svc-projector', { serving: true });
  const bus = openBus(config, log);
  const running = await startProjector({ database, store, bus, schema: config.readModelSchema, batchSize: config.projectorBatchSize, log });
  const health = http.createServer((req, res) => {
    const ok = req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { ok: true, checkpoint: running.projector.position, checkpoints: Object.fromEntries(running.projector.checkpoints) } : { ok: false, error: { code: 'not_found', message: 'GET /healthz' } }));
  });
  health.listen(config.projectorHealthPort, config.host);
  const stop = async () => {
    health.close();
    await running.stop();
    await bus.close();
    await close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error) => {
  console.error('projector failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
