/** Child process: the real service, configured by the environment the parent sets; BENCH_SPLIT=1 runs the API alone. */
import { loadConfig } from '@svc/config';
import { startServer } from '../../apps/api/src/server';
import { startEmbedded } from '../embedded';
import { failStartup, serveUntilStopped } from './childSide';

const config = loadConfig();
(process.env.BENCH_SPLIT === '1' ? startServer(config) : startEmbedded(config))
  .then((running) => serveUntilStopped(running.port, () => running.close()))
  .catch(failStartup);
