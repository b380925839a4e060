import { millis, seq } from './common';
import type { JsonSchema } from './validator';

const sol: JsonSchema = { type: 'number', minimum: 0 };

const lastCycle: JsonSchema = {
  type: ['object', 'null'],
  required: ['cycle', 'at', 'distributed_sol', 'sol_spent', 'tokens_bought', 'tokens_burned', 'signatures', 'skipped_reason'],
  description: 'the latest buyback cycle the workers ran: when, what it moved and why it stopped where it did; null before the first',
  properties: {
    cycle: { type: 'integer', description: 'its number, from 1' },
    at: { ...millis, description: 'when it started' },
    distributed_sol: { ...sol, description: 'SOL the treasury received from the fee distributions it sent' },
    sol_spent: { ...sol, description: 'SOL it put into the service token' },
    tokens_bought: { ...sol, description: 'whole service tokens its buyback received' },
    tokens_burned: { ...sol, description: 'whole service tokens it burned: what it bought, plus anything an interrupted cycle had left' },
    signatures: { type: 'array', items: { type: 'string' }, description: 'every transaction it made, in order' },
    skipped_reason: {
      type: ['string', 'null'],
      description: 'why it bought nothing or stopped early (no service token, SOL below the reserve plus the threshold, a failure); null when it bought and burned',
    },
  },
};

const recentAction: JsonSchema = {
  type: 'object',
  required: ['seq', 'at', 'action', 'signature', 'explorer', 'mint', 'details'],
  properties: {
    seq: { ...seq, description: 'its entry on the ledger, under @treasury' },
    at: millis,
    action: { type: 'string', enum: ['fee_distribution', 'buyback', 'burn', 'deploy'], description: 'deploy: the service token, launched by the treasury' },
    signature: { type: 'string' },
    explorer: { type: 'string' },
    mint: { type: ['string', 'null'] },
    received_sol: { ...sol, description: 'fee_distribution: SOL the treasury received' },
    spent_sol: { ...sol, description: 'buyback: SOL it put into the service token' },
    tokens_bought: { ...sol, description: 'buyback: whole tokens it received' },
    tokens_burned: { ...sol, description: 'burn: whole tokens destroyed' },
    details: { type: 'object', description: 'the action’s record on the ledger, with `observed`: the balances the confirmed transaction moved' },
  },
};

export const treasuryResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'wallet', 'sol', 'fee_share_bps', 'token_mint', 'burn', 'totals', 'recent', 'last_cycle'],
  properties: {
    ok: { const: true },
    handle: { const: 'treasury', description: 'the citizen whose ledger entries are the treasury’s transactions' },
    agent_id: { type: ['string', 'null'] },
    wallet: { type: 'string', description: 'the treasury wallet: a service-custody wallet sealed like the citizens’ keys' },
    sol: { type: ['number', 'null'], description: 'its SOL balance now; null when the chain cannot be reached' },
    fee_share_bps: { type: 'integer', description: 'its share of the creator fee of every coin deployed here with fee sharing (of 10,000)' },
    token_mint: { type: ['string', 'null'], description: 'the service token it buys back and burns; null when none is set' },
    burn: { const: true, description: 'what it buys is burned' },
    totals: {
      type: 'object',
      required: ['fees_distributed_sol', 'sol_spent', 'tokens_bought', 'tokens_burned', 'coins_sharing'],
      description:
        'sums over the treasury’s transactions on the ledger, each taken from the balances its confirmed transaction moved, so a replay ' +
        'of the ledger gives the same figures and anyone can check them on-chain; the *_lamports and *_raw fields are the exact integers',
      properties: {
        fees_distributed_sol: { ...sol, description: 'SOL its fee distributions brought in: its share of the creator fees of coins that share with it' },
        sol_spent: { ...sol, description: 'SOL its buybacks put into the service token (network fees and the opening rent of its own accounts aside)' },
        tokens_bought: { ...sol, description: 'whole service tokens its buybacks received' },
        tokens_burned: { ...sol, description: 'whole service tokens it burned; the token’s supply fell by exactly this' },
        coins_sharing: { type: 'integer', description: 'coins whose active fee-sharing config pays the treasury' },
        distributions: { type: 'integer' },
        buybacks: { type: 'integer' },
        burns: { type: 'integer' },
        fees_distributed_lamports: { type: 'string' },
        sol_spent_lamports: { type: 'string' },
        tokens_bought_raw: { type: 'string' },
        tokens_burned_raw: { type: 'string' },
      },
    },
    recent: { type: 'array', items: recentAction, description: 'its latest transactions, newest first' },
    last_cycle: lastCycle,
    cycle: {
      type: 'object',
      description: 'how the workers run the treasury',
      properties: {
        every_ms: { type: 'integer', description: '0: only when an operator runs one' },
        reserve_sol: { ...sol, description: 'SOL it never spends (network fees, rent)' },
        min_buy_sol: { ...sol, description: 'a buyback needs at least this much SOL above the reserve' },
      },
    },
  },
};
