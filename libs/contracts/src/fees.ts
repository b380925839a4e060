import { executeFlag, executedFields, unsignedFields } from './actions';
import type { JsonSchema, LiteralSchema } from './validator';

const sol = (description: string): JsonSchema => ({ type: 'number', minimum: 0, description });
const nullableSol = (description: string): JsonSchema => ({ type: ['number', 'null'], minimum: 0, description });

const shareholder: JsonSchema = {
  type: 'object',
  required: ['address', 'share_bps'],
  properties: { address: { type: 'string' }, share_bps: { type: 'integer', minimum: 1, maximum: 10_000 } },
};

export const shareBody = {
  type: 'object',
  additionalProperties: false,
  properties: { execute: executeFlag },
} as const satisfies LiteralSchema;

export const shareResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'mint', 'status', 'shares', 'already_sharing'],
  properties: {
    ok: { const: true },
    mint: { type: 'string' },
    status: {
      type: 'string',
      enum: ['active', 'pending'],
      description: '`active`: the sharing config is on-chain with these shares; `pending`: the sharing transaction was handed out unsigned and has not landed yet',
    },
    shares: { type: 'array', items: shareholder, description: 'the split: 9,000 bps to you and 1,000 to the treasury, or what the coin already had on-chain' },
    already_sharing: { type: 'boolean', description: 'the coin shared already: nothing was sent, and `shares` are read from its on-chain sharing config' },
    pool: { type: ['string', 'null'], description: 'the graduated PumpSwap pool whose creator fees the config takes over too' },
    executed: { type: 'boolean', description: 'present when this call made a transaction: true once signed and confirmed, false when handed out' },
    ...executedFields,
    signature: { type: ['string', 'null'], description: 'the sharing transaction (for a coin that shared already: the one the ledger recorded, if any)' },
    ...unsignedFields,
  },
};

const feeCoin: JsonSchema = {
  type: 'object',
  required: ['mint', 'symbol', 'sharing', 'paid_to', 'graduated', 'share_bps', 'curve_vault_sol', 'pool_vault_sol', 'pending_sol', 'claimable_sol'],
  properties: {
    mint: { type: 'string' },
    symbol: { type: ['string', 'null'], description: 'null for a coin not deployed through the service' },
    sharing: { type: 'boolean', description: 'its creator fee is split by a sharing config' },
    paid_to: {
      type: 'string',
      enum: ['sharing', 'creator', 'holders', 'other', 'none'],
      description:
        '`sharing`: its own sharing config’s vaults, paid out by share; `creator`: your wallet’s own vaults, which every coin you created that ' +
        'does not share pays into (see `creator_vault`); `holders`: a holder_reward coin; `other`: someone else is its creator now; `none`: no pump curve',
    },
    graduated: { type: 'boolean', description: 'its curve is complete (a graduated coin also accrues in its PumpSwap pool)' },
    share_bps: { type: ['integer', 'null'], description: 'your share of a sharing coin' },
    curve_vault_sol: nullableSol('sharing: SOL above rent in its pump creator vault; null when it pays your own vaults'),
    pool_vault_sol: nullableSol('sharing: wSOL in its PumpSwap coin-creator vault; null when it pays your own vaults'),
    pending_sol: nullableSol('sharing: what a distribution pays out now across every shareholder (the pool vault counts once PumpSwap can sweep it, from 0.00203928 SOL)'),
    claimable_sol: nullableSol('sharing: your share of pending_sol; null when it pays your own vaults (they are not per coin)'),
  },
};

export const feesResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'wallet', 'total_sol', 'coins', 'creator_vault', 'slot'],
  properties: {
    ok: { const: true },
    wallet: { type: 'string' },
    total_sol: sol('everything a claim would bring to your wallet now: every sharing coin’s claimable_sol plus creator_vault.claimable_sol'),
    coins: { type: 'array', items: feeCoin, description: 'every coin you deployed here or opted into sharing, largest claimable first' },
    creator_vault: {
      type: 'object',
      required: ['curve_vault_sol', 'pool_vault_sol', 'claimable_sol'],
      properties: {
        curve_vault_sol: sol('SOL above rent in pump’s creator vault of your wallet'),
        pool_vault_sol: sol('wSOL in PumpSwap’s coin-creator vault of your wallet'),
        claimable_sol: sol('both, all yours'),
      },
      description: 'your wallet’s own vaults: every coin you created that does not share pays into them, here or elsewhere',
    },
    slot: { type: 'integer', description: 'the vaults were read at this slot or later' },
  },
};

export const claimBody = {
  type: 'object',
  additionalProperties: false,
  properties: { execute: executeFlag },
} as const satisfies LiteralSchema;

const swept: JsonSchema = {
  type: 'object',
  required: ['mint', 'symbol', 'source', 'sol', 'distributed_sol', 'paid', 'transaction_index'],
  properties: {
    mint: { type: ['string', 'null'], description: 'the sharing coin; null for your wallet’s own vaults' },
    symbol: { type: ['string', 'null'] },
    source: {
      type: 'string',
      enum: ['sharing', 'creator'],
      description:
        '`sharing`: distribute_creator_fees of a sharing coin (its pool’s fees moved to pump first once graduated); ' +
        '`creator`: collect_creator_fee and collect_coin_creator_fee of your own vaults',
    },
    coins: { type: 'array', items: { type: 'string' }, description: 'creator: the coins you deployed here that pay into these vaults' },
    sol: sol('SOL expected in your wallet from it'),
    distributed_sol: sol('SOL it pays out in all (sharing: every shareholder’s part, the treasury’s included)'),
    curve_vault_sol: sol('what its pump vault held'),
    pool_vault_sol: sol('what its PumpSwap vault held'),
    paid: {
      type: 'array',
      items: { type: 'object', required: ['address', 'share_bps', 'sol'], properties: { address: { type: 'string' }, share_bps: { type: 'integer' }, sol: { type: 'number' } } },
      description: 'what each recipient is paid: every shareholder of a sharing coin (the treasury’s part included), or your wallet',
    },
    transaction_index: { type: 'integer', description: 'which of `transactions` sweeps it' },
  },
};

const waiting: JsonSchema = {
  type: 'object',
  required: ['mint', 'symbol', 'claimable_sol'],
  properties: {
    mint: { type: ['string', 'null'], description: 'null for your wallet’s own vaults' },
    symbol: { type: ['string', 'null'] },
    claimable_sol: sol('what it would bring you'),
    reason: { type: 'string', description: 'skipped: why it was not swept' },
    minimum_sol: sol('skipped: the least pump distributes for this coin now'),
  },
};

const claimTransaction: JsonSchema = {
  type: 'object',
  required: ['executed', 'mints', 'sol'],
  properties: {
    executed: { type: 'boolean' },
    mints: { type: 'array', items: { type: ['string', 'null'] }, description: 'what it sweeps (null: your own vaults)' },
    sol: sol('SOL expected in your wallet from it'),
    ...executedFields,
    ...unsignedFields,
    error: { type: 'object', description: 'it did not land: its coins are back in `remaining`' },
  },
};

export const claimResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'executed', 'claimed_sol', 'swept', 'transactions', 'remaining', 'skipped'],
  properties: {
    ok: { const: true },
    executed: { type: 'boolean', description: 'true: every transaction landed and is on the ledger; false: they were handed out unsigned' },
    claimed_sol: sol('SOL expected in your wallet in all (before the network fee, which you pay)'),
    swept: { type: 'array', items: swept, description: 'the buckets swept, largest first: at most 6' },
    transactions: {
      type: 'array',
      items: claimTransaction,
      description: 'one `fee_claim` action each, in order; as many as the sweeps need to fit 1,232 bytes a transaction',
    },
    ...executedFields,
    ...unsignedFields,
    remaining: { type: 'array', items: waiting, description: 'buckets with fees left for a next call, largest first' },
    skipped: { type: 'array', items: waiting, description: 'sharing coins below pump’s minimum distributable fee: they wait' },
  },
};
