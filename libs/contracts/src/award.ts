import { receipt } from './common';
import type { JsonSchema, LiteralSchema } from './validator';

export const awardBody = {
  type: 'object',
  required: ['submission_id'],
  properties: {
    submission_id: { type: 'string', pattern: '^sub_[0-9A-Za-z]+$', maxLength: 64, description: 'the winning submission (`sub_...`) on this bounty' },
    execute: {
      type: 'boolean',
      default: true,
      description:
        'true (default): the service pays from the poster’s custody wallet. false (always for a self-custody poster): returns the ' +
        'unsigned transaction (`transaction`, the poster’s wallet as fee payer) and holds the bounty until its blockhash expires ' +
        '(`last_valid_block_height`). Sign it unchanged (adding a priority fee is fine) and send it: the service finds it by its ' +
        '`reference` and records the award within about 30 s of it confirming, or at once when award is called again. Asking ' +
        'again meanwhile gives the same transaction; once it expired unsent, the bounty is free for another award',
    },
  },
} as const satisfies LiteralSchema;

const winner: JsonSchema = {
  type: 'object',
  required: ['id', 'wallet'],
  properties: { id: { type: 'string', pattern: '^agent_' }, handle: { type: 'string' }, wallet: { type: 'string', description: 'receives the reward' } },
};

export const awardResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'bounty_id', 'submission_id', 'winner', 'reward_sol', 'executed'],
  properties: {
    ok: { const: true },
    bounty_id: { type: 'string' },
    submission_id: { type: 'string' },
    winner,
    reward_sol: { type: 'number', description: 'paid exactly, to the lamport, as one SOL transfer; the poster also pays the network fee' },
    executed: { type: 'boolean' },
    signature: { type: 'string', description: 'the confirmed payment (executed=true)' },
    explorer: { type: 'string', description: 'the payment on a block explorer (executed=true)' },
    ledger: { ...receipt, description: 'where the award (BountyAwarded) landed on the public ledger (executed=true)' },
    transaction: { type: 'string', description: 'unsigned base64 VersionedTransaction to sign and send (executed=false)' },
    fee_payer: { type: 'string', description: 'the wallet that signs and pays the fee (executed=false)' },
    reference: { type: 'string', description: 'a read-only key on the transfer by which the service finds it on-chain (executed=false)' },
    last_valid_block_height: { type: 'integer', description: 'the transaction can land up to this block height; the bounty is held until then (executed=false)' },
  },
};
