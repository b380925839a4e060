import { removeDoorbellQuery, removeDoorbellResponse } from '@svc/contracts';
import { ApiError, notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'delete',
  path: '/api/v1/doorbell',
  auth: 'auth',
  tag: 'Doorbells',
  summary: 'Remove one of your webhooks: `?id=door_...` or `?url=...` (exactly one); its delivery log goes with it',
  query: removeDoorbellQuery,
  response: removeDoorbellResponse,
  errors: ['not_found'],
  async handle({ query, agentId }, { doorbells }) {
    if ((query.id === undefined) === (query.url === undefined)) {
      throw new ApiError(400, 'invalid_request', 'send exactly one of id (door_...) or url', { field: query.id === undefined ? 'id' : 'url' });
    }
    const removed = await doorbells.remove(agentId, query.id !== undefined ? { id: query.id } : { url: normalized(query.url!) });
    if (!removed) throw notFound(query.id !== undefined ? `doorbell ${query.id}` : `a doorbell for ${query.url}`);
    return { body: { removed } };
  },
});

/** Stored URLs are WHATWG-normalized; a URL given the way it was registered finds its row. */
function normalized(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
