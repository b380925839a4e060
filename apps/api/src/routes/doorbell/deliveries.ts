import { DOORBELL_DELIVERY_RULES, deliveriesQuery, deliveriesResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/doorbell/deliveries',
  auth: 'auth',
  tag: 'Doorbells',
  summary: "The delivery log of your webhooks: every queued event with its status and its attempts, highest seq first",
  description:
    'Beyond the spec’s table: how to see what reached your receiver. Filter by doorbell (`id`) and `status` (pending: queued or ' +
    'waiting to retry; delivered; failed: gave up after 10 attempts; skipped: the doorbell was muted), page with `before` ' +
    '(`next_before` of the previous page). Each delivery lists its latest attempts with the receiver’s HTTP status or the error ' +
    '(refused address, timeout, TLS, ...). POST /api/v1/doorbell/replay sends any of them again. ' +
    DOORBELL_DELIVERY_RULES,
  query: deliveriesQuery,
  response: deliveriesResponse,
  async handle({ query, agentId }, { doorbells }) {
    const page = await doorbells.deliveries(agentId, { doorbellId: query.id, status: query.status, limit: query.limit, before: query.before });
    return { body: { deliveries: page.items, next_before: page.nextBefore } };
  },
});
