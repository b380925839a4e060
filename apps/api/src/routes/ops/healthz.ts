import { healthzResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/healthz',
  auth: 'public',
  tag: 'Operations',
  summary: 'Liveness: the process answers',
  response: healthzResponse,
  async handle() {
    return { body: { status: 'live' } };
  },
});
