import { ackBody, ackResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';

export default defineRoute<{ at?: number }>({
  method: 'post',
  path: '/api/v1/me/ack',
  auth: 'auth',
  tag: 'Identity',
  summary: 'Move the inbox cursor to `at` (ms), or to now',
  body: ackBody,
  response: ackResponse,
  async handle({ body, agentId }, { vault }) {
    const cursor = body.at ?? Date.now();
    await vault.setInboxCursor(agentId!, cursor);
    return { body: { cursor } };
  },
});
