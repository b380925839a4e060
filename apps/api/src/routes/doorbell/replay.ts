import { DOORBELL_CHANNEL } from '@svc/bus';
import { DOORBELL_PENDING_MAX, replayDoorbellBody, replayDoorbellResponse } from '@svc/contracts';
import type { ReplayOutcome } from '@svc/vault';
import { ApiError, notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

/** A full queue drains at one send at a time; this is only a hint for when to look again. */
const BUSY_RETRY_AFTER_S = 30;

export default defineRoute({
  method: 'post',
  path: '/api/v1/doorbell/replay',
  auth: 'auth',
  tag: 'Doorbells',
  summary: 'Send missed events again: one delivery (`delivery_id`), or the matching entries after `after_seq` for doorbell `id`',
  description:
    'Beyond the spec’s table: the way back from a missed delivery. `{delivery_id}` queues that delivery again with a fresh ' +
    'set of tries; `{id, after_seq}` queues the ledger entries after that seq which the doorbell rings for, whether they were ' +
    `delivered, failed, skipped or never queued. A doorbell may have at most ${DOORBELL_PENDING_MAX} deliveries pending: a call ` +
    'queues only as many as keep it within that (then `next_after_seq` says where to go on once they are delivered), and a call ' +
    `when it is full is 429 rate_limited with \`pending\` and \`cap\` and a Retry-After. A delivery waiting to retry is tried ` +
    'as soon as its doorbell’s pause after a failure ends; one being sent at this moment is left to finish. A muted doorbell ' +
    'is refused: register its URL again to unmute it, then replay.',
  body: replayDoorbellBody,
  response: replayDoorbellResponse,
  errors: ['not_found', 'rate_limited'],
  // It reads the entries read model: a replay right after a write must include it.
  consistentRead: ['entries'],
  async handle({ body, agentId }, { doorbells, bus }) {
    let outcome: ReplayOutcome;
    if (body.delivery_id !== undefined) {
      if (body.id !== undefined || body.after_seq !== undefined) {
        throw new ApiError(400, 'invalid_request', 'send either delivery_id, or id with after_seq, not both', { field: body.id !== undefined ? 'id' : 'after_seq' });
      }
      outcome = await doorbells.replayDelivery(agentId, body.delivery_id, DOORBELL_PENDING_MAX);
      if (!outcome.ok && outcome.reason === 'not_found') throw notFound(`delivery ${body.delivery_id}`);
    } else {
      if (body.id === undefined) throw new ApiError(400, 'invalid_request', 'send delivery_id, or id (door_...) with after_seq', { field: 'delivery_id' });
      if (body.after_seq === undefined) throw new ApiError(400, 'invalid_request', 'after_seq is required with id', { field: 'after_seq' });
      outcome = await doorbells.replayAfter(agentId, body.id, body.after_seq, DOORBELL_PENDING_MAX);
      if (!outcome.ok && outcome.reason === 'not_found') throw notFound(`doorbell ${body.id}`);
    }
    if (!outcome.ok && outcome.reason === 'busy') {
      throw new ApiError(
        429,
        'rate_limited',
        `this doorbell already has ${outcome.pending} deliveries pending (at most ${outcome.cap}): replay more once they are delivered (GET /api/v1/doorbell/deliveries?status=pending)`,
        { pending: outcome.pending, cap: outcome.cap },
        { 'Retry-After': String(BUSY_RETRY_AFTER_S) },
      );
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
