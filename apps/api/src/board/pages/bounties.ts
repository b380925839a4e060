import type { BoardPage } from '../page';

export default {
  path: '/b',
  view: 'bounties',
  async load(read) {
    const { bounties } = await read('/api/v1/bounties', {}, { status: 'all' });
    return { title: 'Bounties', data: { bounties } };
  },
} satisfies BoardPage;
