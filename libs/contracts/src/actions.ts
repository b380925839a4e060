import { receipt, WHOLE_UNITS_LIMIT } from './common';
import { refusesSecrets, type JsonSchema, type LiteralSchema } from './validator';

/** `execute` on every endpoint that signs: one description, so they all promise the same thing. */
export const executeFlag = {
  type: 'boolean',
  default: true,
  description:
    'true (default): the service signs with the citizen’s custody key, sends, waits for confirmation and records the action on the ledger. ' +
    'false (and always for a custody=self citizen): nothing is signed or sent; the reply carries `transaction`, a base64 unsigned ' +
    'VersionedTransaction with the citizen’s wallet as fee payer, to sign and send through POST /api/v1/tx/submit (or any RPC). ' +
    'It carries a read-only `reference` key, so the service records it as this action however it is sent, until ' +
    '`last_valid_block_height` passes',
} as const satisfies LiteralSchema;

/** The reply fields of an action handed out unsigned (executed=false). */
export const unsignedFields: Record<string, JsonSchema> = {
  transaction: { type: 'string', description: 'executed=false: base64 unsigned VersionedTransaction, the citizen’s wallet as fee payer' },
  fee_payer: { type: 'string', description: 'executed=false: the wallet that signs and pays the fee' },
  reference: { type: 'string', description: 'executed=false: a read-only key on the transaction by which the service finds it on-chain' },
  last_valid_block_height: { type: 'integer', description: 'executed=false: the transaction can land up to this block height' },
};

/** The reply fields of an action the service signed and sent (executed=true). */
export const executedFields: Record<string, JsonSchema> = {
  signature: { type: 'string', description: 'executed=true: the confirmed transaction' },
  explorer: { type: 'string', description: 'executed=true: the transaction on a block explorer of the configured cluster' },
  ledger: { ...receipt, description: 'executed=true: where the action landed on the public ledger' },
};

export const transferBody = {
  type: 'object',
  required: ['to', 'amount'],
  additionalProperties: false,
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 64, description: 'the recipient: a handle, an agent id (`agent_...`) or a base58 wallet' },
    amount: {
      type: 'number',
      exclusiveMinimum: 0,
      exclusiveMaximum: WHOLE_UNITS_LIMIT,
      description: 'whole units of the mint (SOL when `mint` is omitted): 0.5 is half a SOL or half a token; at most the mint’s decimals',
    },
    mint: { type: 'string', maxLength: 64, description: 'SPL Token or Token-2022 mint; omit for SOL. The recipient’s token account is created when needed (the sender pays its rent)' },
    memo: { type: 'string', maxLength: 200, description: 'recorded on the ledger and sent on-chain as an SPL Memo', ...refusesSecrets },
    execute: executeFlag,
  },
} as const satisfies LiteralSchema;

export const transferResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'executed', 'from', 'to', 'amount', 'mint', 'memo'],
  properties: {
    ok: { const: true },
    executed: { type: 'boolean' },
    from: { type: 'string', description: 'the sending wallet' },
    to: { type: 'string', description: 'the recipient wallet' },
    to_agent_id: { type: ['string', 'null'], description: 'the recipient citizen, when the wallet belongs to one' },
    amount: { type: 'number', description: 'whole units moved' },
    mint: { type: ['string', 'null'], description: 'null for SOL' },
    memo: { type: ['string', 'null'] },
    ...executedFields,
    ...unsignedFields,
  },
};

export const txSubmitBody = {
  type: 'object',
  required: ['transaction'],
  additionalProperties: false,
  properties: {
    transaction: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description:
        'base64 VersionedTransaction, signed. The fee payer must be your wallet, and your wallet must be its only signer, unless it is a ' +
        'transaction the service handed out (which may carry the service’s co-signatures)',
    },
    simulate_only: { type: 'boolean', default: false, description: 'run it against the chain without broadcasting; signatures are not checked' },
  },
} as const satisfies LiteralSchema;

export const txSubmitResponse: JsonSchema = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: { const: true },
    executed: { type: 'boolean', description: 'true once sent, confirmed and recorded' },
    action: {
      type: 'string',
      description: 'what the ledger records it as: the action it was handed out for (transfer, award_payment, ...) or `submit`',
    },
    ...executedFields,
    details: {
      type: 'object',
      description: 'a transaction the service handed out: what the action it was handed out for records (the amounts, the mint, ...), as that endpoint’s reply names them',
    },
    simulated: { type: 'boolean', description: 'simulate_only: true' },
    err: { description: 'simulate_only: the transaction error, or null when it would succeed' },
    logs: { type: 'array', items: { type: 'string' }, description: 'simulate_only: the program logs' },
    units_consumed: { type: ['integer', 'null'], description: 'simulate_only: compute units used' },
  },
};
