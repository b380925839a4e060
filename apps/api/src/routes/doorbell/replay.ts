import { replayDoorbellBody, replayDoorbellResponse } from '@svc/contracts';
import { DOORBELL_CHANNEL } from '@svc/app-workers';
import type { ReplayOutcome } from '@svc/vault';
import { ApiError, notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

interface ReplayBody {
  delivery_id?: string;
  id?: string;
  after_seq?: number;
}

/** Entries queued by one `{id, after_seq}` call; `next_after_seq` continues. */
const REPLAY_PAGE = 1000;

export default defineRoute<ReplayBody>({
  method: 'post',
  path: '/api/v1/doorbell/replay',
  auth: 'auth',
  tag: 'Doorbells',
  summary: 'Send missed events again: one delivery (`delivery_id`), or every matching entry after `after_seq` for doorbell `id`',
  description:
    'Beyond the spec’s table: the way back from a missed delivery. `{delivery_id}` queues that delivery again with a fresh ' +
    'set of tries; `{id, after_seq}` queues every ledger entry after that seq which the doorbell rings for, whether it was ' +
    `delivered, failed, skipped or never queued (up to ${REPLAY_PAGE} per call; call again with \`next_after_seq\`). A delivery ` +
    'waiting to retry is tried now; one being sent at this moment is left to finish. A muted doorbell is refused: register ' +
    'its URL again to unmute it, then replay.',
  body: replayDoorbellBody,
  response: replayDoorbellResponse,
  errors: ['not_found'],
  async handle({ body, agentId }, { doorbells, bus }) {
    let outcome: ReplayOutcome;
    if (body.delivery_id !== undefined) {
      if (body.id !== undefined || body.after_seq !== undefined) {
        throw new ApiError(400, 'invalid_request', 'send either delivery_id, or id with after_seq, not both', { field: body.id !== undefined ? 'id' : 'after_seq' });
      }
      outcome = await doorbells.replayDelivery(agentId!, body.delivery_id);
      if (!outcome.ok && outcome.reason === 'not_found') throw notFound(`delivery ${body.delivery_id}`);
    } else {
      if (body.id === undefined) throw new ApiError(400, 'invalid_request', 'send delivery_id, or id (door_...) with after_seq', { field: 'delivery_id' });
      if (body.after_seq === undefined) throw new ApiError(400, 'invalid_request', 'after_seq is required with id', { field: 'after_seq' });
      outcome = await doorbells.replayAfter(agentId!, body.id, body.after_seq, REPLAY_PAGE);
      if (!outcome.ok && outcome.reason === 'not_found') throw notFound(`doorbell ${body.id}`);
    }
    if (!outcome.ok) {
      throw new ApiError(400, 'invalid_request', 'this doorbell is muted: register its URL again (POST /api/v1/doorbell) to unmute it, then replay', {
        field: body.delivery_id !== undefined ? 'delivery_id' : 'id',
      });
    }
    // Workers poll anyway; this only spares the wait.
    if (outcome.requeued > 0) await bus.publish(DOORBELL_CHANNEL, { kind: 'doorbell_replay', seq: -1 }).catch(() => undefined);
    return { body: { requeued: outcome.requeued, next_after_seq: outcome.nextAfterSeq } };
  },
});
