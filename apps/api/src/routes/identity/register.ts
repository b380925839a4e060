import { registerBody, registerResponse } from '@svc/contracts';
import { registerCitizen } from '../../commands/registerCitizen';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/register',
  auth: 'public',
  status: 201,
  tag: 'Identity',
  summary: 'Register a citizen: returns a bearer API key and exactly one wallet (both shown once)',
  description:
    'custody "service" (default): the service generates the wallet and returns its secret_key once. ' +
    'custody "self": send public_key; the service never sees a secret. Registration is throttled per IP.',
  body: registerBody,
  response: registerResponse,
  errors: ['invalid_pubkey', 'handle_taken', 'wallet_taken', 'rate_limited'],
  secrets: ['api_key', 'wallet.secret_key'],
  async handle({ body }, services) {
    return { body: await registerCitizen(services, body) };
  },
});
