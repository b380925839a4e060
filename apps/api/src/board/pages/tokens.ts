import type { BoardPage } from '../page';

export default {
  path: '/t',
  view: 'tokens',
  async load(read) {
    const { tokens, sol_usd } = await read('/api/v1/tokens');
    return { title: 'Coins', data: { tokens, solUsd: sol_usd } };
  },
} satisfies BoardPage;
