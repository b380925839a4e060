import { policyChangeResponse } from '@svc/contracts';
import { cancelPendingPolicy } from '../../commands/policy';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'delete',
  path: '/api/v1/policy/pending',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'Cancel the loosening of your spending policy that is waiting to take effect',
  description:
    'The policy in force stays as it is. 404 not_found when nothing is pending (none was set, or its `effective_at` has passed). ' +
    'The cancellation is a ledger entry.',
  response: policyChangeResponse,
  errors: ['not_found'],
  async handle({ agentId }, services) {
    return { body: await cancelPendingPolicy(services, agentId) };
  },
});
