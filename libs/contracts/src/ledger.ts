import { ledgerEntry, millis, seq } from './common';
import { LONG_POLL_MAX_SECONDS } from './realtime';
import type { JsonSchema, LiteralSchema } from './validator';

export const changesQuery = {
  type: 'object',
  properties: {
    since: { ...millis, description: 'entries whose `at` is at or after this time (ms)' },
    after: { ...seq, description: 'exact resumption: entries with seq greater than this' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
    wait: {
      type: 'number',
      minimum: 0,
      maximum: LONG_POLL_MAX_SECONDS,
      description: `seconds (at most ${LONG_POLL_MAX_SECONDS}) to hold the request while there is no entry past \`after\``,
    },
  },
} as const satisfies LiteralSchema;

export const changesResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'changes', 'head', 'next_after', 'has_more'],
  properties: {
    ok: { const: true },
    changes: { type: 'array', items: ledgerEntry },
    head: { type: 'object', properties: { seq: { type: 'integer' } } },
    next_after: { type: 'integer', description: 'pass as `after` to continue exactly where this page ended' },
    has_more: { type: 'boolean' },
  },
};

const seqRange: JsonSchema = {
  type: 'object',
  required: ['from', 'to'],
  properties: { from: { type: 'integer' }, to: { type: 'integer' } },
};

const hashHex = { type: 'string', pattern: '^[0-9a-f]{64}$' };

export const attestQuery = {
  type: 'object',
  properties: {
    full: {
      type: 'boolean',
      default: false,
      description:
        'start a full re-verification from seq 0 in the background (one start per address per minute; while one runs, the answer only reports its progress)',
    },
  },
} as const satisfies LiteralSchema;

const fullPass: JsonSchema = {
  type: 'object',
  description: 'the running full re-verification from seq 0, or the last one (run by any process of the service)',
  required: ['state', 'trigger', 'started_at', 'head_at_start', 'checked', 'updated_at'],
  properties: {
    state: { enum: ['running', 'finished', 'abandoned'], description: '`abandoned`: its process stopped or died first' },
    trigger: { enum: ['schedule', 'request'] },
    started_at: { ...millis, description: 'when it started (ms)' },
    head_at_start: { type: 'integer', description: 'the head seq when it started: it checks seqs 0 to this one (-1: empty)' },
    checked: { type: 'integer', description: 'entries checked so far' },
    updated_at: { ...millis, description: 'its last progress report (ms)' },
    finished_at: { ...millis },
    ok: { type: 'boolean', description: 'set when finished: every entry up to head_at_start is intact' },
    first_bad: {
      type: 'object',
      required: ['seq', 'reason'],
      properties: {
        seq: { type: 'integer', description: 'the first entry changed, missing or not linked to the one before' },
        reason: { type: 'string' },
        expected_hash: { ...hashHex, description: 'a changed row: the hash its stored bytes give; a broken link: the hash of the entry before' },
        stored_hash: { ...hashHex, description: 'the hash (or prev) the row holds' },
      },
    },
  },
};

export const anchorView: JsonSchema = {
  type: 'object',
  required: ['seq', 'hash', 'signature', 'slot', 'at', 'ledger_seq', 'explorer'],
  properties: {
    seq: { ...seq, description: 'the ledger entry the anchor commits to: its memo is `svc-ledger:v1:<seq>:<hash>`' },
    hash: { type: 'string', description: 'that entry’s hash' },
    signature: { type: 'string', description: 'the treasury’s transaction carrying the memo' },
    slot: { type: ['integer', 'null'], description: 'the slot it landed in' },
    at: { ...millis, description: 'when the anchor was recorded' },
    ledger_seq: { ...seq, description: 'the anchor’s own entry (action `anchor` under @treasury)' },
    explorer: { type: 'string', description: 'the transaction in an explorer' },
  },
};

export const anchorsQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    before: { ...seq, minimum: 0, description: 'page on: `next_before` of the previous page' },
  },
} as const satisfies LiteralSchema;

export const anchorsResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'anchors', 'next_before'],
  properties: { ok: { const: true }, anchors: { type: 'array', items: anchorView, description: 'newest first' }, next_before: { type: ['integer', 'null'] } },
};

export const attestResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'head', 'length', 'verified'],
  properties: {
    ok: { const: true },
    head: { type: 'string', description: 'hash of the last entry (64 zeros when empty)' },
    length: { type: 'integer' },
    verified: {
      type: 'object',
      description: 'the incremental check: the remembered prefix is trusted, entries stored since are hashed now',
      required: ['ok', 'checked'],
      properties: {
        ok: { type: 'boolean' },
        checked: { type: 'integer', description: 'entries from seq 0 known intact' },
        first_bad_seq: { type: 'integer' },
        reason: { type: 'string' },
        checked_now: { ...seqRange, description: 'seqs hashed for this answer (absent: nothing new)' },
        from_earlier: { ...seqRange, description: 'seqs taken from earlier checks without reading them again' },
        last_full_at: { ...millis, description: 'when the last full re-verification finished (absent: none yet)' },
        last_full_ok: { type: 'boolean', description: 'whether it found the chain intact' },
      },
    },
    full: fullPass,
    hash_construction: { type: 'string' },
    anchor: { anyOf: [anchorView, { type: 'null' }], description: 'the latest anchor of the ledger on Solana (GET /api/v1/anchors); null before the first' },
    unanchored: { type: 'integer', minimum: 0, description: 'entries after the latest anchor’s seq, which no anchor covers yet' },
  },
};
