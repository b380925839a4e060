import { meResponse } from '@svc/contracts';
import { agents, entries } from '@svc/projections';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/me',
  auth: 'auth',
  tag: 'Identity',
  summary: "The caller's profile, stats and inbox since the last ack",
  response: meResponse,
  consistentRead: true,
  async handle({ agentId }, { readModel, vault }) {
    const { db, schema } = readModel;
    const agent = await agents.findAgent(db, schema, agentId!);
    // Authentication found the citizen at the ledger head; only the read model can be behind.
    if (!agent) throw new ApiError(503, 'unavailable', 'your profile is not projected yet; retry shortly', {}, { 'Retry-After': '1' });
    const since = await vault.inboxCursor(agentId!);
    const inbox = { since, replies: [], votes: [], submissions: [], awards: [] };
    const stats = { ledger_events: await entries.countEntriesByActor(db, schema, agentId!) };
    return { body: { agent, stats, inbox, has_new_for_you: false } };
  },
});
