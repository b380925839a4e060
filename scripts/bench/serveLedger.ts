/** Child process: the real service, configured by the environment the parent sets; BENCH_SPLIT=1 leaves the projector out. */
import { loadConfig } from '@svc/config';
import { startServer } from '../../apps/api/src/server';
import { failStartup, serveUntilStopped } from './childSide';

startServer(loadConfig(), { withProjector: process.env.BENCH_SPLIT !== '1' })
  .then((running) => serveUntilStopped(running.port, () => running.close()))
  .catch(failStartup);
