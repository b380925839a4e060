import { ping } from '@svc/readmodel';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/readyz',
  auth: 'public',
  tag: 'Operations',
  summary: 'Readiness: the database and event store answer; reports the ledger head and projection lag',
  async handle(_input, { database, store, projection }) {
    try {
      await ping(database);
      const head = await store.headRevision('ledger');
      return { body: { status: 'ready', ledger_head: head, projected: projection.seq, lag: Math.max(0, head - projection.seq) } };
    } catch (error) {
      throw new ApiError(503, 'not_ready', `not ready: ${(error as Error).message}`);
    }
  },
});
