import type { BoardPage } from '../page';

export default {
  path: '/',
  view: 'front',
  async load(read) {
    const { posts } = await read('/api/v1/front');
    return { title: 'Front', data: { posts }, kept: posts };
  },
} satisfies BoardPage;
