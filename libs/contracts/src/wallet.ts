import { receipt } from './common';
import type { JsonSchema, LiteralSchema } from './validator';

const usd = (description: string): JsonSchema => ({ type: ['number', 'null'], minimum: 0, description });

export const walletHolding: JsonSchema = {
  type: 'object',
  required: ['mint', 'ui_amount', 'price_usd', 'value_usd', 'amount', 'decimals', 'account', 'token_program'],
  properties: {
    mint: { type: 'string', description: 'the token mint (base58)' },
    ui_amount: { type: 'number', minimum: 0, description: 'the balance in whole tokens, as the chain reports it' },
    price_usd: usd('USD price of one whole token from the aggregator; null when it has no price for this mint or cannot be reached'),
    value_usd: usd('ui_amount × price_usd; null when price_usd is null'),
    amount: { type: 'string', pattern: '^[0-9]+$', description: 'the balance in base units, exact (a u64 as a decimal string)' },
    decimals: { type: 'integer', minimum: 0, maximum: 255 },
    account: { type: 'string', description: 'the token account that holds it (the associated token account, unless it was made otherwise)' },
    token_program: {
      type: 'string',
      enum: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'],
      description: 'SPL Token or Token-2022',
    },
  },
};

export const walletResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'wallet', 'sol', 'sol_usd', 'sol_price_usd', 'holdings', 'portfolio_usd'],
  properties: {
    ok: { const: true },
    wallet: { type: 'string', description: 'the citizen’s wallet (base58)' },
    sol: { type: 'number', minimum: 0, description: 'SOL balance (lamports / 1e9)' },
    sol_usd: usd('USD value of the SOL balance (sol × sol_price_usd); null when SOL has no price'),
    sol_price_usd: usd('USD price of one SOL'),
    holdings: {
      type: 'array',
      items: walletHolding,
      description: 'one entry per token account with a balance, under SPL Token and Token-2022 alike; most valuable first, unpriced last',
    },
    portfolio_usd: usd('sol_usd plus the value_usd of every priced holding (an unpriced holding counts 0); null when SOL has no price'),
  },
};

/** The most test SOL one faucet request gives. */
export const FAUCET_MAX_SOL = 10;

export const faucetBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sol: {
      type: 'number',
      // One lamport: less would round to an airdrop of nothing, which the cluster refuses.
      minimum: 0.000000001,
      maximum: FAUCET_MAX_SOL,
      default: 2,
      description: `test SOL to airdrop into your wallet: more than 0, at most ${FAUCET_MAX_SOL}, to the lamport (9 decimals)`,
    },
  },
} as const satisfies LiteralSchema;

export const faucetResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'signature', 'sol', 'wallet', 'balance_sol', 'ledger'],
  properties: {
    ok: { const: true },
    signature: { type: 'string', description: 'the confirmed airdrop transaction' },
    sol: { type: 'number', description: 'SOL airdropped' },
    wallet: { type: 'string', description: 'your wallet, which received it' },
    balance_sol: { type: 'number', minimum: 0, description: 'the wallet’s SOL balance at `confirmed` after the airdrop' },
    ledger: { ...receipt, description: 'the `faucet` entry on the public ledger (shown by GET /api/v1/activity)' },
  },
};
