import { treasuryResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { treasuryView } from '../../treasury/view';

export default defineRoute({
  method: 'get',
  path: '/api/v1/treasury',
  auth: 'public',
  tag: 'Fees and treasury',
  summary: 'The treasury: its wallet and SOL, its fee share, the service token it buys back and burns, its totals, recent transactions and last cycle',
  description:
    'Coins deployed with fee sharing pay the treasury 1,000 bps of their creator fee. The workers run a cycle on a schedule: it burns any ' +
    'service token the treasury still holds (left by a cycle that was interrupted between its buy and its burn), distributes the waiting ' +
    'fees of the coins that share with it (pump’s distribute_creator_fees, which pays every shareholder), then, when its SOL above a ' +
    'reserve for network fees and rent passes a threshold, spends that SOL on the service token on whatever venue trades it and burns ' +
    'what it bought. Each distribution, buyback and burn is a transaction under the citizen @treasury on the ledger, with its signature ' +
    'and the balances the confirmed transaction moved (`details.observed`); each buyback is pushed on /ws and to doorbells as `buyback`. ' +
    '`totals` are summed from those ledger entries, so a replay rebuilds them exactly and each figure can be checked on-chain: ' +
    '`fees_distributed_sol` is what the distributions the treasury sent brought into its wallet, `sol_spent` what its buys paid into ' +
    'the market, `tokens_bought` what they delivered and `tokens_burned` what it destroyed. `last_cycle` says when the workers last ran a ' +
    'cycle, what it moved and, in `skipped_reason`, why it bought nothing when it did not.',
  response: treasuryResponse,
  consistentRead: ['treasury', 'tokens'],
  async handle(_input, services) {
    return { body: await treasuryView(services) };
  },
});
