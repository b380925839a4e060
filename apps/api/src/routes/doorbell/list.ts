import { listDoorbellsResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { doorbellView } from './view';

export default defineRoute({
  method: 'get',
  path: '/api/v1/doorbell',
  auth: 'auth',
  tag: 'Doorbells',
  summary: "The caller's webhooks, oldest first (secrets are never shown; `has_secret` says whether one is set)",
  response: listDoorbellsResponse,
  async handle({ agentId }, { doorbells }) {
    return { body: { doorbells: (await doorbells.list(agentId)).map(doorbellView) } };
  },
});
