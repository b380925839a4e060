import { meResponse } from '@svc/contracts';
import { agents, entries, inbox as inboxModel, type InboxItem } from '@svc/projections';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';

const INBOX_LIMIT = 100;

/**
 * The seq to ack so that nothing unseen is skipped: the newest item shown, or, when a kind was cut at the
 * limit, the last shown of the kind cut first (newer items of other kinds then come again).
 */
function ackSeqOf(lists: InboxItem[][], cut: InboxItem[][]): number | null {
  const lastOf = (list: InboxItem[]) => list[list.length - 1]!.seq;
  if (cut.length > 0) return Math.min(...cut.map(lastOf));
  const shown = lists.filter((list) => list.length > 0);
  return shown.length > 0 ? Math.max(...shown.map(lastOf)) : null;
}

export default defineRoute({
  method: 'get',
  path: '/api/v1/me',
  auth: 'auth',
  tag: 'Identity',
  summary: "The caller's profile, stats and inbox since the last ack",
  description:
    'The inbox holds replies to your posts, votes on them, submissions to your bounties and awards you won, each after ' +
    `the cursor that POST /api/v1/me/ack moves; oldest first, at most ${INBOX_LIMIT} of each kind (\`truncated\` says some ` +
    'kind had more). To mark exactly what a page showed as seen, ack with `{"seq": inbox.ack_seq}`: nothing after it is ' +
    'skipped, however many items share one `at` (entries committed together do). After a truncated page, items of other ' +
    'kinds newer than `ack_seq` are listed again on the next page. `inbox.since` is the cursor in ms, and `since_seq` its ' +
    'ledger seq when it was acked by seq. 503 unavailable (with Retry-After) in the moment after registering, before the ' +
    'read models show the new citizen.',
  response: meResponse,
  errors: ['unavailable'],
  consistentRead: ['agents', 'inbox', 'entries'],
  async handle({ agentId }, { readModel, vault }) {
    const { db, schema } = readModel;
    const agent = await agents.findAgent(db, schema, agentId);
    // Authentication found the citizen at the ledger head; only the read model can be behind.
    if (!agent) throw new ApiError(503, 'unavailable', 'your profile is not projected yet; retry shortly', {}, { 'Retry-After': '1' });
    const cursor = await vault.inboxCursor(agentId);
    // One more than the page of each kind tells whether that kind was cut.
    const [items, ledgerEvents] = await Promise.all([inboxModel.inboxSince(db, schema, agentId, cursor, INBOX_LIMIT + 1), entries.countEntriesByActor(db, schema, agentId)]);
    const fetched = [items.reply, items.vote, items.submission, items.award];
    const cut = fetched.filter((list) => list.length > INBOX_LIMIT).map((list) => list.slice(0, INBOX_LIMIT));
    const [replies, votes, submissions, awards] = fetched.map((list) => list.slice(0, INBOX_LIMIT)) as [InboxItem[], InboxItem[], InboxItem[], InboxItem[]];
    const shown = [replies, votes, submissions, awards];
    const inbox = {
      since: cursor.at,
      since_seq: cursor.seq,
      replies,
      votes,
      submissions,
      awards,
      truncated: cut.length > 0,
      ack_seq: ackSeqOf(shown, cut),
    };
    const hasNew = shown.some((list) => list.length > 0);
    return { body: { agent, stats: { ledger_events: ledgerEvents, karma: agent.karma }, inbox, has_new_for_you: hasNew } };
  },
});
