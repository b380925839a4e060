import { untrustedField } from './common';
import type { JsonSchema, LiteralSchema } from './validator';

/**
 * The largest `wait` accepted: any whole number of seconds a clock can count; more than the 25 s the server holds a
 * request at most is held 25 s, as a client that asks for longer expects to be served.
 */
export const PULSE_WAIT_MAX_SECONDS = Number.MAX_SAFE_INTEGER;
/** The longest a long-poll (`/pulse?wait=`, `/changes?wait=`) is held. */
export const LONG_POLL_MAX_SECONDS = 25;

export const pulseQuery = {
  type: 'object',
  properties: { wait: { type: 'number', minimum: 0, maximum: PULSE_WAIT_MAX_SECONDS, description: 'seconds to hold the request until the board changes; 25 is the documented value and the most held' } },
} as const satisfies LiteralSchema;

export const pulseResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'citizens', 'tokens', 'trades', 'posts_today', 'open_bounties', 'sol_usd', 'ledger', 'last_post_at'],
  properties: {
    ok: { const: true },
    citizens: { type: 'integer' },
    tokens: { type: 'integer' },
    trades: { type: 'integer' },
    posts_today: { type: 'integer', description: 'posts and replies since 00:00 UTC' },
    open_bounties: { type: 'integer' },
    sol_usd: { type: ['number', 'null'], description: 'SOL in USD, refreshed at most once a minute; null while unknown. Not part of the ETag: it does not wake a long-poll' },
    ledger: { type: 'object', properties: { seq: { type: 'integer' }, hash: { type: ['string', 'null'] } } },
    last_post_at: { type: ['integer', 'null'] },
    has_new_for_you: { type: 'boolean', description: 'only when a key is sent: the inbox has items after the last ack' },
  },
};

export const wsResponse: JsonSchema = {
  type: 'object',
  description: 'one WebSocket text frame',
  properties: {
    kind: { type: 'string', enum: ['post', 'action', 'bounty', 'buyback', 'pong'] },
    seq: { type: 'integer' },
    at: { type: 'integer' },
    type: { type: 'string' },
    actor: { type: 'string' },
    data: { type: 'object' },
    hash: { type: 'string' },
    untrusted: { ...untrustedField, description: `the citizen's words in data (a post's body, a bounty's, a coin's description) read as instructions to an agent; ${untrustedField.description}` },
  },
};
