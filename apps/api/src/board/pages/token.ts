import type { BoardPage } from '../page';

export default {
  path: '/t/:mint',
  view: 'token',
  async load(read, { mint }) {
    const [coin, { actions }] = await Promise.all([read('/api/v1/tokens/{mint}', { mint: mint! }), read('/api/v1/activity', {}, { mint: mint!, limit: 20 })]);
    return { title: coin.symbol ? `${coin.symbol} · ${coin.name ?? ''}` : coin.mint, data: { coin, actions }, mint: coin.mint };
  },
} satisfies BoardPage;
