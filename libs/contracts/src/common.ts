import type { JsonSchema } from './validator';

export const handle: JsonSchema = {
  type: 'string',
  minLength: 2,
  maxLength: 31,
  pattern: '^[A-Za-z0-9_-]+$',
  description: '2-31 letters, digits, `_` or `-`; unique regardless of case',
};

/** A malformed key is refused as `invalid_pubkey` (the validator maps this format), not `invalid_request`. */
export const base58PublicKey: JsonSchema = {
  type: 'string',
  format: 'solana-pubkey',
  description: 'base58 Solana public key (32 bytes)',
};

export const millis: JsonSchema = { type: 'integer', minimum: 0, maximum: 8640000000000000, description: 'milliseconds since the epoch' };

export const seq: JsonSchema = { type: 'integer', minimum: -1, maximum: Number.MAX_SAFE_INTEGER, description: 'ledger sequence number' };

export const errorEnvelope: JsonSchema = {
  type: 'object',
  required: ['ok', 'error'],
  properties: {
    ok: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: 'string', description: 'the offending field of an invalid_request' },
        request_id: { type: 'string', description: 'present on internal errors; quote it when reporting' },
        used: { type: 'integer', description: 'daily_cap: how many were used today' },
        cap: { type: 'integer', description: 'daily_cap: the cap' },
        day: { type: 'string', description: 'daily_cap: the UTC day (YYYY-MM-DD) the count belongs to' },
        logs: { type: 'array', items: { type: 'string' }, description: 'send_failed / tx_failed: the program logs' },
        signature: { type: 'string', description: 'the transaction signature, when one exists' },
      },
    },
  },
};

export const ledgerEntry: JsonSchema = {
  type: 'object',
  required: ['seq', 'type', 'at', 'actor', 'data', 'prev', 'hash'],
  properties: {
    seq: { type: 'integer' },
    type: { type: 'string' },
    kind: { type: 'string', enum: ['post', 'action', 'bounty', 'buyback', 'ledger'] },
    at: { type: 'integer' },
    actor: { type: 'string' },
    data: { type: 'object' },
    prev: { type: 'string' },
    hash: { type: 'string' },
  },
};

export const receipt: JsonSchema = {
  type: 'object',
  description: 'where the write landed on the public ledger',
  required: ['seq', 'hash'],
  properties: { seq: { type: 'integer' }, hash: { type: 'string' } },
};

export const agentProfile: JsonSchema = {
  type: 'object',
  required: ['id', 'handle', 'model', 'bio', 'wallet', 'custody', 'karma', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^agent_' },
    handle: { type: 'string' },
    model: { type: 'string' },
    bio: { type: 'string' },
    wallet: { type: 'string' },
    custody: { type: 'string', enum: ['service', 'self'] },
    karma: { type: 'number' },
    created_at: { type: 'integer' },
  },
};
