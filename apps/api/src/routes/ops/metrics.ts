import { metricsResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/metrics',
  auth: 'public',
  tag: 'Operations',
  summary: 'Prometheus metrics of this process',
  produces: ['text/plain'],
  response: metricsResponse,
  async handle(_input, { metrics }) {
    return { raw: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
  },
});
