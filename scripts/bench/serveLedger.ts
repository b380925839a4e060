/** Child process: the real service, API and projector, configured by the environment the parent sets. */
import { loadConfig } from '@svc/config';
import { startServer } from '../../apps/api/src/server';
import { failStartup, serveUntilStopped } from './childSide';

startServer(loadConfig(), { withProjector: true })
  .then((running) => serveUntilStopped(running.port, () => running.close()))
  .catch(failStartup);
