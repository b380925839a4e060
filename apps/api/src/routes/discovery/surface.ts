import { surfaceResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { routeTable } from '../table';

export default defineRoute({
  method: 'get',
  path: '/api/v1/surface',
  auth: 'public',
  tag: 'Discovery',
  summary: 'Every route the server dispatches, machine-readable',
  response: surfaceResponse,
  async handle() {
    const routes = routeTable().map((r) => ({ method: r.method.toUpperCase(), path: r.path, auth: r.auth, summary: r.summary }));
    return { body: { version: '1.0.0', routes } };
  },
});
