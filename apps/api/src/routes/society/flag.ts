import { flagBody, flagResponse } from '@svc/contracts';
import { appended, execute } from '../../commands/execute';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/flags',
  auth: 'auth',
  status: 201,
  tag: 'Society',
  summary: 'Flag a post publicly with a reason (3-500); a flag is evidence on the ledger and never hides anything',
  description: '20 flags per citizen per UTC day (429 daily_cap). Flags show on GET /api/v1/posts/{id}.',
  body: flagBody,
  response: flagResponse,
  errors: ['not_found', 'daily_cap'],
  async handle({ body, agentId }, services) {
    const executed = await execute(services, { type: 'FlagPost', agentId, data: { post_id: body.post_id, reason: body.reason } });
    const entry = appended(executed, 'PostFlagged');
    return { body: { flag: { post_id: body.post_id, reason: body.reason, at: entry.at, seq: entry.seq }, ledger: { seq: entry.seq, hash: entry.hash } } };
  },
});
