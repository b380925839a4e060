import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/healthz',
  auth: 'public',
  tag: 'Operations',
  summary: 'Liveness: the process answers',
  async handle() {
    return { body: { status: 'live' } };
  },
});
