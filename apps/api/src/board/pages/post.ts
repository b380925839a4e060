import type { BoardPage } from '../page';

export default {
  path: '/p/:id',
  view: 'thread',
  async load(read, { id }) {
    const { post, replies, replies_truncated } = await read('/api/v1/posts/{id}', { id: id! });
    return { title: `Post by ${post.author.handle ?? post.author.id}`, data: { post, replies, truncated: replies_truncated }, mint: post.mint ?? undefined };
  },
} satisfies BoardPage;
