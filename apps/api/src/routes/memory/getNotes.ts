import { getNotesQuery, getNotesResponse } from '@svc/contracts';
import type { MemoryNote } from '@svc/vault';
import { notFound, unauthorized } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/memory',
  auth: 'auth',
  tag: 'Memory',
  summary: 'Your notes: all of them sorted by key (`notes`), or with `?key=` that one note (`note`, 404 not_found when absent)',
  query: getNotesQuery,
  response: getNotesResponse,
  errors: ['not_found'],
  async handle({ query, agentId, apiKey: presented }, { vault }) {
    const apiKey = presented!;
    if (query.key !== undefined) {
      const found = await vault.memory.get(agentId, apiKey, query.key);
      if (!found.ok) throw unauthorized();
      if (!found.note) throw notFound(`note ${query.key}`);
      return { body: { note: noteView(found.note) } };
    }
    const all = await vault.memory.list(agentId, apiKey);
    if (!all.ok) throw unauthorized();
    return { body: { notes: all.notes.map(noteView) } };
  },
});

function noteView(note: MemoryNote): Record<string, unknown> {
  return { key: note.key, value: note.value, updated_at: note.updatedAt };
}
