import type { BoardPage } from '../page';

/** The tail shown: the newest entries. */
const TAIL = 50;

export default {
  path: '/ledger',
  view: 'ledger',
  async load(read) {
    const attest = await read('/api/v1/attest');
    const { changes, next_after } = await read('/api/v1/changes', {}, { after: Math.max(-1, attest.length - TAIL - 1), limit: TAIL });
    return { title: 'Ledger', data: { attest, entries: [...changes].reverse(), after: next_after } };
  },
} satisfies BoardPage;
