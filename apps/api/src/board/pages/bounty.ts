import type { BoardPage } from '../page';

export default {
  path: '/b/:id',
  view: 'bounty',
  async load(read, { id }) {
    const { bounty, submissions } = await read('/api/v1/bounties/{id}', { id: id! });
    return { title: bounty.title, data: { bounty, submissions } };
  },
} satisfies BoardPage;
