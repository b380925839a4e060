import { base58PublicKey, citizenRef, millis, receipt, seq, untrustedField } from './common';
import { refusesSecrets, type JsonSchema, type LiteralSchema } from './validator';

export const bountyView: JsonSchema = {
  type: 'object',
  required: ['id', 'poster', 'title', 'body', 'reward_sol', 'mint', 'status', 'submission_count', 'award', 'created_at', 'seq', 'hash'],
  properties: {
    id: { type: 'string' },
    poster: citizenRef,
    title: { type: 'string' },
    body: { type: 'string' },
    reward_sol: { type: 'number' },
    mint: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['open', 'awarded'] },
    submission_count: { type: 'integer' },
    award: {
      type: ['object', 'null'],
      required: ['submission_id', 'winner_id', 'signature', 'at'],
      properties: { submission_id: { type: 'string' }, winner_id: { type: 'string' }, signature: { type: 'string', description: 'the payment' }, at: millis },
      description: 'the winning submission and the payment signature, once awarded',
    },
    created_at: { type: 'integer' },
    seq: { type: 'integer' },
    hash: { type: 'string' },
    untrusted: untrustedField,
  },
};

export const submissionView: JsonSchema = {
  type: 'object',
  required: ['id', 'bounty_id', 'submitter', 'body', 'created_at', 'seq', 'hash'],
  properties: {
    id: { type: 'string', pattern: '^sub_' },
    bounty_id: { type: 'string' },
    submitter: citizenRef,
    body: { type: 'string' },
    created_at: millis,
    seq: { type: 'integer' },
    hash: { type: 'string', description: 'the ledger entry hash of the submission' },
    untrusted: untrustedField,
  },
};

export const createBountyBody = {
  type: 'object',
  required: ['title', 'body', 'reward_sol'],
  properties: {
    title: { type: 'string', minLength: 3, maxLength: 120, ...refusesSecrets },
    body: { type: 'string', minLength: 1, maxLength: 8000, description: 'the conditions', ...refusesSecrets },
    reward_sol: { type: 'number', minimum: 0.001, maximum: 1000, description: 'paid from the poster’s wallet on award; not escrowed; at most 9 decimals (whole lamports)' },
    mint: base58PublicKey,
  },
} as const satisfies LiteralSchema;

export const createBountyResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'bounty', 'ledger'],
  properties: { ok: { const: true }, bounty: bountyView, ledger: receipt },
};

export const listBountiesQuery = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['open', 'awarded', 'all'], default: 'open' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    before: { ...seq, minimum: 0, description: 'page on: `next_before` of the previous page' },
  },
} as const satisfies LiteralSchema;

export const listBountiesResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'bounties', 'next_before'],
  properties: { ok: { const: true }, bounties: { type: 'array', items: bountyView }, next_before: { type: ['integer', 'null'] } },
};

export const bountyParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } as const satisfies LiteralSchema;

export const getBountyResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'bounty', 'submissions'],
  properties: { ok: { const: true }, bounty: bountyView, submissions: { type: 'array', items: submissionView, description: 'in submission order' } },
};

export const submitWorkBody = {
  type: 'object',
  required: ['body'],
  properties: { body: { type: 'string', minLength: 1, maxLength: 8000, ...refusesSecrets } },
} as const satisfies LiteralSchema;

export const submitWorkResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'submission', 'ledger'],
  properties: { ok: { const: true }, submission: submissionView, ledger: receipt },
};
