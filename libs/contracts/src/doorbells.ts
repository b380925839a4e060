import { millis, seq } from './common';
import type { JsonSchema, LiteralSchema } from './validator';

export const DOORBELL_KINDS = ['post', 'action', 'bounty', 'buyback'] as const;
export type DoorbellKind = (typeof DOORBELL_KINDS)[number];

/** At most this many doorbells per citizen (the spec's limit). */
export const DOORBELLS_PER_CITIZEN = 3;

/** A replay leaves at most this many deliveries pending per doorbell (and queues at most this many per call). */
export const DOORBELL_PENDING_MAX = 100;

/**
 * How a doorbell is delivered to, retried and muted: written once, shown in the OpenAPI description of
 * every doorbell route that it concerns.
 */
export const DOORBELL_DELIVERY_RULES =
  'Each doorbell has its own queue: at most one delivery to it is in flight at a time (oldest due first), so a slow or ' +
  'failing receiver delays only its own deliveries, never another doorbell’s. A failed attempt (non-2xx, no answer within 5 s, ' +
  'refused address) adds 1 to the doorbell’s `failures` and pauses every delivery to it: nothing is sent to it for a backoff ' +
  'that doubles with each consecutive failure (5 s, 10 s, 20 s, ... up to 1 h, each between half and all of that, for jitter); ' +
  'the failed delivery is retried with the same backoff, at most 10 times, then marked `failed`. A 2xx answer resets ' +
  '`failures` and the pause. At 10 consecutive failures, which take at least about 20 minutes of a sustained outage, the ' +
  'doorbell is muted: its pending deliveries are marked `skipped` and new events are not queued for it. Registering the ' +
  'same URL again unmutes it and resets `failures` and the pause; events after that are delivered as usual, and ' +
  'POST /api/v1/doorbell/replay sends what was missed.';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;

const doorbellId = { type: 'string', pattern: '^door_[0-9A-Z]{26}$', description: 'a doorbell id (`door_` + ULID)' } as const satisfies LiteralSchema;
const deliveryId = { type: 'string', pattern: '^dlv_[0-9A-Z]{26}$', description: 'a delivery id (`dlv_` + ULID)' } as const satisfies LiteralSchema;

export const doorbellView: JsonSchema = {
  type: 'object',
  required: ['id', 'url', 'kinds', 'has_secret', 'muted', 'failures', 'created_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    kinds: { type: 'array', items: { type: 'string', enum: [...DOORBELL_KINDS] } },
    has_secret: { type: 'boolean', description: 'deliveries are signed; the secret itself is never shown again' },
    muted: { type: 'boolean', description: 'true after 10 consecutive failed attempts, spaced by a growing backoff; registering the same URL again unmutes' },
    failures: { type: 'integer', description: 'consecutive failed attempts to this doorbell (one at a time, each followed by a pause); a success resets it' },
    created_at: { type: 'integer' },
  },
};

export const registerDoorbellBody = {
  type: 'object',
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'an https URL on a public host; no credentials in it' },
    secret: { type: 'string', minLength: 16, maxLength: 256, description: 'HMAC-SHA256 key (16+ bytes) of `x-svc-signature: t=<ms>,v1=<hex of "t.body">`' },
    kinds: {
      type: 'array',
      minItems: 1,
      maxItems: DOORBELL_KINDS.length,
      uniqueItems: true,
      items: { type: 'string', enum: [...DOORBELL_KINDS] },
      description: 'which events ring it (`buyback`: the treasury bought back the service token); all of them when left out',
    },
  },
} as const satisfies LiteralSchema;

export const registerDoorbellResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'doorbell'],
  properties: {
    ok: { const: true },
    doorbell: doorbellView,
    updated: { type: 'boolean', description: 'true when this URL was registered already: kinds and secret replaced, failures reset, unmuted' },
  },
};

export const listDoorbellsResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'doorbells'],
  properties: { ok: { const: true }, doorbells: { type: 'array', items: doorbellView } },
};

export const removeDoorbellQuery = {
  type: 'object',
  properties: {
    id: doorbellId,
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'the URL it was registered with' },
  },
} as const satisfies LiteralSchema;

export const removeDoorbellResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'removed'],
  properties: { ok: { const: true }, removed: { type: 'object', required: ['id', 'url'], properties: { id: { type: 'string' }, url: { type: 'string' } } } },
};

export const deliveriesQuery = {
  type: 'object',
  properties: {
    id: { ...doorbellId, description: 'only this doorbell’s deliveries' },
    status: { type: 'string', enum: [...DELIVERY_STATUSES] },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    before: { ...deliveryId, description: 'page on: `next_before` of the previous page' },
  },
} as const satisfies LiteralSchema;

const attemptView: JsonSchema = {
  type: 'object',
  required: ['n', 'at', 'ok', 'http_status', 'error', 'duration_ms'],
  properties: {
    n: { type: 'integer', description: 'attempt number, from 1' },
    at: millis,
    ok: { type: 'boolean' },
    http_status: { type: ['integer', 'null'], description: 'the receiver’s status; null when no answer came' },
    error: { type: ['string', 'null'] },
    duration_ms: { type: 'integer' },
  },
};

export const deliveryView: JsonSchema = {
  type: 'object',
  required: ['id', 'doorbell_id', 'seq', 'kind', 'status', 'attempts', 'next_attempt_at', 'created_at', 'delivered_at', 'last_http_status', 'last_error', 'log'],
  properties: {
    id: { type: 'string' },
    doorbell_id: { type: 'string' },
    seq: { ...seq, description: 'the ledger entry delivered' },
    kind: { type: 'string', enum: [...DOORBELL_KINDS] },
    status: {
      type: 'string',
      enum: [...DELIVERY_STATUSES],
      description: 'pending (queued or waiting to retry), delivered (2xx), failed (gave up after 10 attempts), skipped (the doorbell was muted)',
    },
    attempts: { type: 'integer' },
    next_attempt_at: { ...millis, type: ['integer', 'null'], description: 'when a pending delivery is tried next at the earliest (its own retry, and its doorbell’s pause after a failure)' },
    created_at: millis,
    delivered_at: { type: ['integer', 'null'] },
    last_http_status: { type: ['integer', 'null'] },
    last_error: { type: ['string', 'null'] },
    log: { type: 'array', items: attemptView, description: 'the latest attempts, newest last' },
  },
};

export const deliveriesResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'deliveries', 'next_before'],
  properties: { ok: { const: true }, deliveries: { type: 'array', items: deliveryView }, next_before: { type: ['string', 'null'] } },
};

export const replayDoorbellBody = {
  type: 'object',
  properties: {
    delivery_id: { ...deliveryId, description: 'queue this one delivery again' },
    id: { ...doorbellId, description: `with after_seq: queue the matching ledger entries after that seq for this doorbell, up to ${DOORBELL_PENDING_MAX} pending` },
    after_seq: { ...seq, description: 'with id: entries with a larger seq are delivered again (or for the first time)' },
  },
} as const satisfies LiteralSchema;

export const replayDoorbellResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'requeued', 'next_after_seq'],
  properties: {
    ok: { const: true },
    requeued: { type: 'integer', description: 'deliveries queued (again), due now; one being sent at this moment is left to finish' },
    next_after_seq: { type: ['integer', 'null'], description: 'when more entries may remain: call again with this after_seq once the queued ones are delivered' },
  },
};
