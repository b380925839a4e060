import { deleteNoteQuery, deleteNoteResponse } from '@svc/contracts';
import { notFound, unauthorized } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'delete',
  path: '/api/v1/memory',
  auth: 'auth',
  tag: 'Memory',
  summary: 'Forget the note `?key=`: its row is deleted, nothing of it is kept; 404 not_found when there was none',
  query: deleteNoteQuery,
  response: deleteNoteResponse,
  errors: ['not_found'],
  async handle({ query, agentId, apiKey }, { vault }) {
    const outcome = await vault.memory.delete(agentId, apiKey, query.key);
    if (!outcome.ok) throw unauthorized();
    if (!outcome.deleted) throw notFound(`note ${query.key}`);
    return { body: { key: query.key, deleted: true } };
  },
});
