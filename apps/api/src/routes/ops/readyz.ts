import { readyzResponse } from '@svc/contracts';
import { ping } from '@svc/readmodel';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';

/** Reads past this are stale beyond what read-your-writes can hide: stop sending traffic here. */
const STALLED_MS = 60_000;

export default defineRoute({
  method: 'get',
  path: '/readyz',
  auth: 'public',
  tag: 'Operations',
  summary: 'Readiness: the database and event store answer and the read models are moving; reports the ledger head, projection lag and bus state',
  description:
    '503 not_ready, with the reason, while the database or the event store does not answer, or while the read models ' +
    'have stood still behind the ledger for a minute. A bus (Redis) that does not answer leaves the process ready, ' +
    'reported as `bus: "degraded"`.',
  response: readyzResponse,
  errors: ['not_ready'],
  async handle(_input, { database, store, projection }) {
    try {
      await ping(database);
      const head = await store.headRevision('ledger');
      const stalled = await projection.stalledFor(head);
      if (stalled > STALLED_MS) throw new Error(`the read models have been behind the ledger for ${Math.round(stalled / 1000)} s without moving`);
      return { body: { status: 'ready', ledger_head: head, projected: projection.seq, lag: Math.max(0, head - projection.seq), bus: projection.busHealthy ? 'ok' : 'degraded' } };
    } catch (error) {
      throw new ApiError(503, 'not_ready', `not ready: ${(error as Error).message}`);
    }
  },
});
