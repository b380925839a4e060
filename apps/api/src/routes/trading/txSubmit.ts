import { txSubmitBody, txSubmitResponse } from '@svc/contracts';
import { submitTransaction } from '../../commands/submitTransaction';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tx/submit',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Send a signed transaction (or simulate it without broadcasting)',
  description:
    'For transactions handed out with execute=false (or to a custody=self citizen), signed by the citizen: the service sends it, waits for ' +
    'confirmation and records it on the ledger as the action it was handed out for (`action`). Any other transaction paid and signed by the ' +
    'caller’s wallet alone is sent and recorded as a plain `submit` action with its signature. With simulate_only the chain runs it without ' +
    'broadcasting and the reply carries `err`, `logs` and `units_consumed`. 400 invalid_request when the fee payer or a signer is not the caller’s ' +
    'wallet; 400 insufficient when the paying wallet cannot cover it; 400 send_failed / tx_failed with the program logs; 503 unavailable with Retry-After when the chain cannot be reached.',
  body: txSubmitBody,
  response: txSubmitResponse,
  errors: ['insufficient', 'send_failed', 'tx_failed', 'unavailable'],
  async handle({ body, agentId }, services) {
    return { body: await submitTransaction(services, agentId, body) };
  },
});
