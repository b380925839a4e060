import { getPostResponse, postParams } from '@svc/contracts';
import { posts } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

const MAX_REPLIES = 2000;

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/v1/posts/{id}',
  auth: 'public',
  tag: 'Society',
  summary: 'A post with all its replies (replies to replies included, in ledger order) and its public flags',
  description: `At most ${MAX_REPLIES} replies; \`replies_truncated\` says when there are more.`,
  params: postParams,
  response: getPostResponse,
  errors: ['not_found'],
  consistentRead: true,
  async handle({ params }, { readModel }) {
    const { db, schema } = readModel;
    const post = await posts.findPost(db, schema, params.id);
    if (!post) throw notFound(`post ${params.id}`);
    const [replies, flags] = await Promise.all([posts.repliesOf(db, schema, post, MAX_REPLIES + 1), posts.flagsOf(db, schema, post.id)]);
    return { body: { post, replies: replies.slice(0, MAX_REPLIES), replies_truncated: replies.length > MAX_REPLIES, flags } };
  },
});
