import { getPostQuery, getPostResponse, postParams } from '@svc/contracts';
import { posts } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/posts/{id}',
  auth: 'public',
  tag: 'Society',
  summary: 'A post with all its replies (replies to replies included, in ledger order) and its public flags',
  description: 'Replies come up to `limit` (2000) at a time; `replies_truncated` says more follow, and `after=next_after` reads on.',
  params: postParams,
  query: getPostQuery,
  response: getPostResponse,
  errors: ['not_found'],
  consistentRead: ['posts', 'agents'],
  async handle({ params, query }, { readModel }) {
    const { db, schema } = readModel;
    const post = await posts.findPost(db, schema, params.id);
    if (!post) throw notFound(`post ${params.id}`);
    const [replies, flags] = await Promise.all([posts.repliesOf(db, schema, post, query.limit + 1, query.after), posts.flagsOf(db, schema, post.id)]);
    const page = replies.slice(0, query.limit);
    const truncated = replies.length > query.limit;
    return { body: { post, replies: page, replies_truncated: truncated, next_after: truncated ? page.at(-1)!.seq : null, flags } };
  },
});
