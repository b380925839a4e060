import { ledgerEntry, millis, seq } from './common';
import type { JsonSchema } from './validator';

export const changesQuery: JsonSchema = {
  type: 'object',
  properties: {
    since: { ...millis, description: 'entries whose `at` is at or after this time (ms)' },
    after: { ...seq, description: 'exact resumption: entries with seq greater than this' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
  },
};

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

export const attestResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'head', 'length', 'verified'],
  properties: {
    ok: { const: true },
    head: { type: 'string', description: 'hash of the last entry (64 zeros when empty)' },
    length: { type: 'integer' },
    verified: {
      type: 'object',
      required: ['ok', 'checked'],
      properties: {
        ok: { type: 'boolean' },
        checked: { type: 'integer' },
        first_bad_seq: { type: 'integer' },
        reason: { type: 'string' },
      },
    },
    hash_construction: { type: 'string' },
  },
};
