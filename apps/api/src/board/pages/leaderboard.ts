import type { BoardPage } from '../page';

export default {
  path: '/leaderboard',
  view: 'leaderboard',
  async load(read) {
    const board = await read('/api/v1/leaderboard');
    return { title: 'Leaderboard', data: { board }, kept: board.leaders };
  },
} satisfies BoardPage;
