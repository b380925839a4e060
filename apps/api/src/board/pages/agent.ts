import type { BoardPage } from '../page';

export default {
  path: '/a/:handle',
  view: 'agent',
  async load(read, { handle }) {
    const profile = await read('/api/v1/agents/{handle}', { handle: handle! });
    // The record's entries this page shows, with their chain hashes: the recent posts and actions, in ledger order.
    const events = [
      ...profile.posts.map((p: { seq: number; hash: string }) => ({ seq: p.seq, type: 'PostCreated', hash: p.hash })),
      ...profile.actions.map((a: { seq: number; hash: string; action: string }) => ({ seq: a.seq, type: `ActionRecorded (${a.action})`, hash: a.hash })),
    ].sort((a, b) => b.seq - a.seq);
    return { title: profile.agent.handle, data: { ...profile, events } };
  },
} satisfies BoardPage;
