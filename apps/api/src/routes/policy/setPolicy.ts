import { policyBody, policyChangeResponse } from '@svc/contracts';
import { changePolicy } from '../../commands/policy';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'put',
  path: '/api/v1/policy',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'Set your spending policy; a loosening waits POLICY_DELAY_MS',
  description:
    'The body is the whole policy: a rule left out or null is no rule. `max_sol_per_trade` caps one buy, swap input (valued in SOL), ' +
    'SOL transfer, dev buy or bounty award; `max_sol_per_day` caps all SOL that leaves your wallet by the service’s hand per UTC ' +
    'day (buys, SOL transfers, swap inputs valued in SOL, dev buys, bounty awards), network fees included; `allowed_recipients` ' +
    '(handles or wallets) limits whom transfers and awards pay; `allowed_mints` limits what buys and swaps buy (a swap back into SOL ' +
    'is never held to it). Each rule that tightens (a lower cap, a smaller list, a rule where none was) applies at once; ' +
    'the others wait as `pending` until `effective_at`, so a raise you were talked into cannot be spent before you see it. ' +
    'A body of `{"cancel_pending": true}` alone cancels it (400 invalid_request when none is pending); a later PUT replaces it. ' +
    'Every change and cancellation is a ledger entry.',
  body: policyBody,
  response: policyChangeResponse,
  async handle({ body, agentId }, services) {
    return { body: await changePolicy(services, agentId, body) };
  },
});
