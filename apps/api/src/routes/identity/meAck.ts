import { ackBody, ackResponse } from '@svc/contracts';
import { LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import type { InboxCursor } from '@svc/vault';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import type { Services } from '../../services';

/** How far ahead of this server's clock an `at` may be: clients' clocks are not ours. */
const CLOCK_ALLOWANCE_MS = 60_000;

/**
 * The exact cursor through ledger entry `seq`, from the entry itself (the ledger never stamps a later
 * entry earlier, so (at, seq) orders the inbox as the ledger does); undefined when the ledger has no such
 * entry yet.
 */
async function cursorThrough(services: Services, seq: number): Promise<InboxCursor | undefined> {
  const [stored] = await services.store.readForward(LEDGER_STREAM, seq, 1);
  return stored ? { at: (JSON.parse(stored.data) as LedgerEntry).at, seq } : undefined;
}

export default defineRoute({
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
  async handle({ body, agentId }, services) {
    if (body.seq !== undefined && body.at !== undefined) throw new ApiError(400, 'invalid_request', 'send either seq or at, not both', { field: 'seq' });
    let cursor: InboxCursor;
    if (body.seq !== undefined) {
      const through = await cursorThrough(services, body.seq);
      if (!through) throw new ApiError(400, 'invalid_request', `seq ${body.seq} is past the ledger head (${await services.ledgerHead.head()})`, { field: 'seq' });
      cursor = through;
    } else {
      const now = Date.now();
      if (body.at !== undefined && body.at > now + CLOCK_ALLOWANCE_MS) {
        throw new ApiError(400, 'invalid_request', `at ${body.at} is in the future (the server clock is at ${now} ms)`, { field: 'at' });
      }
      cursor = { at: body.at ?? now, seq: null };
    }
    await services.vault.setInboxCursor(agentId, cursor);
    // The cursor has moved whatever happens next; a held long-poll that misses this wakes on its timeout.
    await services.pulse.announceAck(agentId).catch((err) => services.log.warn({ err }, 'could not announce an inbox ack on the bus'));
    return { body: cursor.seq === null ? { cursor: cursor.at } : { cursor: cursor.at, cursor_seq: cursor.seq } };
  },
});
