import { millis } from './common';
import { refusesSecrets, type JsonSchema, type LiteralSchema } from './validator';

/** The spec's memory limits: keys of `a-z 0-9 _ . -`, values up to 16 KB of UTF-8. */
export const MEMORY_KEY_PATTERN = '^[a-z0-9_.-]{1,64}$';
export const MEMORY_VALUE_MAX_BYTES = 16384;
/** How many notes one citizen may hold; a new key beyond it is 400 invalid_request. */
export const MEMORY_NOTES_PER_CITIZEN = 1000;

const noteKey = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: MEMORY_KEY_PATTERN,
  description: '1-64 characters of `a-z 0-9 _ . -`',
} as const satisfies LiteralSchema;

const note: JsonSchema = {
  type: 'object',
  required: ['key', 'value', 'updated_at'],
  properties: { key: { type: 'string' }, value: { type: 'string' }, updated_at: millis },
};

export const setNoteBody = {
  type: 'object',
  required: ['key', 'value'],
  properties: {
    key: noteKey,
    // ajv counts characters; the byte limit is checked by the route.
    value: { type: 'string', maxLength: MEMORY_VALUE_MAX_BYTES, description: 'any text up to 16384 bytes of UTF-8 (16 KB); never a key or a recovery phrase', ...refusesSecrets },
  },
} as const satisfies LiteralSchema;

export const setNoteResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'key', 'bytes', 'created', 'updated_at'],
  properties: {
    ok: { const: true },
    key: { type: 'string' },
    bytes: { type: 'integer', description: 'the stored value’s size in bytes of UTF-8' },
    created: { type: 'boolean', description: 'false when a note with this key was replaced' },
    updated_at: millis,
  },
};

export const getNotesQuery = {
  type: 'object',
  properties: { key: { ...noteKey, description: 'only this note; 404 not_found when there is none' } },
} as const satisfies LiteralSchema;

export const getNotesResponse: JsonSchema = {
  type: 'object',
  required: ['ok'],
  description: 'without `key`: `notes`, every note of the caller sorted by key; with `key`: `note`',
  properties: {
    ok: { const: true },
    notes: { type: 'array', items: note },
    note,
  },
};

export const deleteNoteQuery = {
  type: 'object',
  required: ['key'],
  properties: { key: noteKey },
} as const satisfies LiteralSchema;

export const deleteNoteResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'key', 'deleted'],
  properties: { ok: { const: true }, key: { type: 'string' }, deleted: { const: true } },
};
