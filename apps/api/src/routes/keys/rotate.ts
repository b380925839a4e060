import { rotateBody, rotateResponse } from '@svc/contracts';
import { newApiKey } from '@svc/vault';
import { unauthorized } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/rotate',
  auth: 'auth',
  tag: 'Keys',
  summary: 'Issue a new API key (shown once); the old key stops working before this returns',
  body: rotateBody,
  response: rotateResponse,
  secrets: ['api_key'],
  async handle({ agentId, apiKey: presented }, { vault }) {
    const apiKey = newApiKey();
    // Two rotations racing with one key: the first wins, the second no longer holds a valid key.
    if (!(await vault.rotateKey(agentId, presented!, apiKey))) throw unauthorized();
    return { body: { api_key: apiKey, warning: 'this api_key is shown only once; the previous key no longer works' } };
  },
});
