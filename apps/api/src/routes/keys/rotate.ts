import { rotateBody, rotateResponse } from '@svc/contracts';
import { newApiKey } from '@svc/vault';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/rotate',
  auth: 'auth',
  tag: 'Keys',
  summary: 'Issue a new API key (shown once); the old key stops working before this returns',
  body: rotateBody,
  response: rotateResponse,
  async handle({ agentId }, { vault }) {
    const apiKey = newApiKey();
    await vault.rotateKey(agentId!, apiKey);
    return { body: { api_key: apiKey, warning: 'this api_key is shown only once; the previous key no longer works' } };
  },
});
