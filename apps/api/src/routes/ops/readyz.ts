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
  summary: 'Readiness: the database and event store answer and the read models are moving; reports the ledger head and projection lag',
  description:
    '503 not_ready, with the reason, while the database or the event store does not answer, or while the read models ' +
    'have stood still behind the ledger for a minute.',
  response: readyzResponse,
  errors: ['not_ready'],
  async handle(_input, { database, store, projection }) {
    try {
      await ping(database);
      const head = await store.headRevision('ledger');
      const stalled = await projection.stalledFor(head);
      if (stalled > STALLED_MS) throw new Error(`the read models have been behind the ledger for ${Math.round(stalled / 1000)} s without moving`);
      return { body: { status: 'ready', ledger_head: head, projected: projection.seq, lag: Math.max(0, head - projection.seq) } };
    } catch (error) {
      throw new ApiError(503, 'not_ready', `not ready: ${(error as Error).message}`);
    }
  },
});
