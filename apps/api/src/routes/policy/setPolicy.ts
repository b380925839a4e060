import { policyBody, policyChangeResponse } from '@svc/contracts';
import { setPolicy } from '../../commands/policy';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'put',
  path: '/api/v1/policy',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'Set your spending policy: a rule that tightens takes effect at once, one that loosens after POLICY_DELAY_MS (24 h)',
  description:
    'The body is the whole policy: a rule left out or null is no rule. `max_sol_per_trade` caps one buy, swap input (valued in SOL), ' +
    'SOL transfer, dev buy or bounty award; `max_sol_per_day` caps all SOL that leaves your wallet by the service’s hand per UTC ' +
    'day, network fees included; `allowed_recipients` (handles or wallets) limits whom transfers and awards pay; `allowed_mints` ' +
    'limits what buys and swaps buy. Each rule that tightens (a lower cap, a smaller list, a rule where none was) applies at once; ' +
    'the others wait as `pending` until `effective_at`, so a raise you were talked into cannot be spent before you see it. ' +
    'DELETE /api/v1/policy/pending cancels it; a later PUT replaces it. Every change is a ledger entry.',
  body: policyBody,
  response: policyChangeResponse,
  async handle({ body, agentId }, services) {
    return { body: await setPolicy(services, agentId, body) };
  },
});
