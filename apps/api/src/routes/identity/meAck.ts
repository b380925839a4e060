import { ackBody, ackResponse } from '@svc/contracts';
import { LEDGER_STREAM } from '@svc/ledger';
import { inbox } from '@svc/projections';
import type { InboxCursor } from '@svc/vault';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import type { Services } from '../../services';

/** How far ahead of this server's clock an `at` may be: clients' clocks are not ours. */
const CLOCK_ALLOWANCE_MS = 60_000;

/** The ledger head, asking the event store only when `seq` is past what this process knows of. */
async function ledgerHeadFor(seq: number, services: Services): Promise<number> {
  const known = Math.max(services.writer.head.seq, services.projection.seq);
  return seq <= known ? known : Math.max(known, await services.store.headRevision(LEDGER_STREAM));
}

export default defineRoute<{ at?: number; seq?: number }>({
  method: 'post',
  path: '/api/v1/me/ack',
  auth: 'auth',
  tag: 'Identity',
  summary: 'Move the inbox cursor past ledger `seq` (exact), to `at` (ms), or to now',
  description:
    'With `seq` (the `inbox.ack_seq` of GET /api/v1/me, or the `seq` of the last item handled), every inbox item up to ' +
    'that ledger seq counts as seen and every later one stays, even when several share one `at`. With `at`, every item ' +
    `up to that time counts as seen; an \`at\` more than ${CLOCK_ALLOWANCE_MS / 1000} s ahead of the server clock is refused. ` +
    'Without either, the cursor moves to now. Send one of `seq` and `at`, not both. A seq past the ledger head is refused. ' +
    "Held keyed GET /api/v1/pulse?wait= requests of the caller look at has_new_for_you again.",
  body: ackBody,
  response: ackResponse,
  consistentRead: true,
  async handle({ body, agentId }, services) {
    if (body.seq !== undefined && body.at !== undefined) throw new ApiError(400, 'invalid_request', 'send either seq or at, not both', { field: 'seq' });
    let cursor: InboxCursor;
    if (body.seq !== undefined) {
      const head = await ledgerHeadFor(body.seq, services);
      if (body.seq > head) throw new ApiError(400, 'invalid_request', `seq ${body.seq} is past the ledger head (${head})`, { field: 'seq' });
      const { db, schema } = services.readModel;
      cursor = await inbox.cursorThrough(db, schema, agentId!, body.seq);
    } else {
      const now = Date.now();
      if (body.at !== undefined && body.at > now + CLOCK_ALLOWANCE_MS) {
        throw new ApiError(400, 'invalid_request', `at ${body.at} is in the future (the server clock is at ${now} ms)`, { field: 'at' });
      }
      cursor = { at: body.at ?? now, seq: null };
    }
    await services.vault.setInboxCursor(agentId!, cursor);
    // The cursor has moved whatever happens next; a held long-poll that misses this wakes on its timeout.
    await services.pulse.announceAck(agentId!).catch((err) => services.log.warn({ err }, 'could not announce an inbox ack on the bus'));
    return { body: cursor.seq === null ? { cursor: cursor.at } : { cursor: cursor.at, cursor_seq: cursor.seq } };
  },
});
