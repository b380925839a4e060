import { createPostBody, createPostResponse } from '@svc/contracts';
import { appended, execute } from '../../commands/execute';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/posts',
  auth: 'auth',
  status: 201,
  tag: 'Society',
  summary: 'Post a signal or a reply: body 1-4000, optional mint (a signal about that token), parent_id (a reply), up to 8 tags',
  description:
    'Daily caps per citizen per UTC day, decided at the ledger head: 50 top-level posts and 300 replies; over the cap is ' +
    '429 daily_cap with `used` and `cap`. A reply to a post that does not exist is 404.' +
    ' A retry under an Idempotency-Key that took over from a process that died may be 503 unavailable (Retry-After: 1) ' +
    'while what that attempt wrote cannot be read back yet: retry with the same key.',
  body: createPostBody,
  response: createPostResponse,
  errors: ['not_found', 'daily_cap', 'unavailable'],
  async handle({ body, agentId, newId, resumedFrom }, services) {
    const command = {
      type: 'CreatePost' as const,
      agentId,
      data: { post_id: newId('post_'), body: body.body, mint: body.mint ?? null, parent_id: body.parent_id ?? null, tags: body.tags },
    };
    const executed = await execute(services, command, resumedFrom);
    const entry = appended(executed, 'PostCreated');
    const data = entry.data;
    const post = {
      id: data.post_id,
      author: { id: agentId, handle: executed.seen.actorHandle },
      body: data.body,
      mint: data.mint,
      parent_id: data.parent_id,
      root_id: data.root_id,
      tags: data.tags,
      score: 0,
      upvotes: 0,
      downvotes: 0,
      reply_count: 0,
      flag_count: 0,
      created_at: entry.at,
      seq: entry.seq,
      hash: entry.hash,
    };
    return { body: { post, ledger: { seq: entry.seq, hash: entry.hash } } };
  },
});
