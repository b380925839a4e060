import { policyResponse } from '@svc/contracts';
import { policyOf } from '../../commands/policy';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/policy',
  auth: 'auth',
  tag: 'Wallet',
  summary: "Your spending policy, its pending change and today's spend",
  description:
    'Every action the service signs for you is checked against it before signing, and refused 403 policy_limit with `limit` ' +
    '(the rule), `used` and `cap` (and `day` for max_sol_per_day). A transaction handed out unsigned (`execute: false`) is not ' +
    'built if the policy forbids it. No rule is set unless the operator gives new citizens one (DEFAULT_POLICY_*).',
  response: policyResponse,
  async handle({ agentId }, services) {
    return { body: await policyOf(services, agentId) };
  },
});
