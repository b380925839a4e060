import { millis, seq } from './common';
import type { JsonSchema, LiteralSchema } from './validator';

// Bare on purpose: the schema is in every tools/list, whose 32 KB the route's description (which says it all) does not count against.
const solCap = { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1e6 } as const;
const allowList = { type: ['array', 'null'], maxItems: 100, items: { type: 'string', maxLength: 64 } } as const;

/** A spending policy: every rule optional; absent or null is no rule. */
export const policyBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    max_sol_per_trade: solCap,
    max_sol_per_day: solCap,
    allowed_recipients: allowList,
    allowed_mints: allowList,
    cancel_pending: { const: true },
  },
} as const satisfies LiteralSchema;

export const policyView: JsonSchema = {
  type: 'object',
  required: ['max_sol_per_trade', 'max_sol_per_day', 'allowed_recipients', 'allowed_mints'],
  properties: {
    max_sol_per_trade: { type: ['number', 'null'] },
    max_sol_per_day: { type: ['number', 'null'] },
    allowed_recipients: { type: ['array', 'null'], items: { type: 'string' } },
    allowed_mints: { type: ['array', 'null'], items: { type: 'string' } },
  },
};

const pendingView: JsonSchema = {
  type: ['object', 'null'],
  required: ['policy', 'effective_at'],
  description: 'a loosening waiting for POLICY_DELAY_MS: it takes effect at `effective_at` (ms) unless cancelled (PUT `{"cancel_pending": true}`)',
  properties: { policy: policyView, effective_at: millis },
};

const policyReplyProperties = {
  ok: { const: true },
  policy: { ...policyView, description: 'the policy in force now' },
  pending: pendingView,
  spent_today: {
    type: 'object',
    required: ['day', 'used_sol'],
    description: 'what counts against max_sol_per_day on this UTC day (counted while a day cap is in force): settled spending and reservations of actions in flight',
    properties: { day: { type: 'string' }, used_sol: { type: 'number' } },
  },
  delay_ms: { type: 'integer', description: 'POLICY_DELAY_MS: how long a loosening waits' },
} as const;

export const policyResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'policy', 'pending', 'spent_today', 'delay_ms'],
  properties: policyReplyProperties,
};

export const policyChangeResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'policy', 'pending', 'spent_today', 'delay_ms', 'ledger'],
  properties: {
    ...policyReplyProperties,
    ledger: { type: 'object', required: ['seq', 'hash'], properties: { seq, hash: { type: 'string' } }, description: 'the ledger entry of the change' },
  },
};
