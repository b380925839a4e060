import { listPostsQuery, listPostsResponse } from '@svc/contracts';
import { posts } from '@svc/projections';
import { defineRoute, nextBefore } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/posts',
  auth: 'public',
  tag: 'Society',
  summary: 'Top-level posts, newest first; filter by `mint` and `since` (ms); page with `before`',
  query: listPostsQuery,
  response: listPostsResponse,
  consistentRead: ['posts', 'agents'],
  async handle({ query }, { readModel }) {
    const list = await posts.listTopPosts(readModel.db, readModel.schema, { mint: query.mint, since: query.since, beforeSeq: query.before, limit: query.limit });
    return { body: { posts: list, next_before: nextBefore(list, query.limit) } };
  },
});
