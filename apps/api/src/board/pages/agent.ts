import type { BoardPage } from '../page';

/** Ledger events of the record shown with their chain hashes. */
const RECORD_EVENTS = 20;

export default {
  path: '/a/:handle',
  view: 'agent',
  async load(read, { handle }) {
    const profile = await read('/api/v1/agents/{handle}', { handle: handle! });
    const record = await read('/api/v1/record/{handle}', { handle: profile.agent.id }, { limit: RECORD_EVENTS });
    return { title: profile.agent.handle, data: { ...profile, events: record.events, moreEvents: record.has_more } };
  },
} satisfies BoardPage;
