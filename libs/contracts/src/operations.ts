import type { JsonSchema } from './validator';

/** GET /healthz: the process answers. */
export const healthzResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'status'],
  properties: { ok: { const: true }, status: { const: 'live' } },
};

/**
 * The parts without which a process is not ready, as a 503 not_ready names them (`error.part`). The parts it
 * serves without (the bus, the chain) are reported on the ready reply instead.
 */
export const READINESS_PARTS = ['database', 'event_store', 'read_models'] as const;
export type ReadinessPart = (typeof READINESS_PARTS)[number];

/** GET /readyz: the stores answer and the read models move (503 not_ready otherwise). */
export const readyzResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'status', 'ledger_head', 'projected', 'lag', 'read_models', 'bus', 'chain', 'treasury', 'anchors'],
  properties: {
    ok: { const: true },
    status: { const: 'ready' },
    bus: {
      enum: ['ok', 'degraded'],
      description:
        'degraded while the bus (Redis) does not answer: the process still serves, reads and long-polls follow the projection checkpoint instead of its announcements',
    },
    chain: {
      enum: ['ok', 'unreachable'],
      description:
        'unreachable while the Solana RPC does not answer within a second (asked at most once every 5 s): reads still serve, on-chain actions fail until it answers',
    },
    treasury: {
      enum: ['ok', 'unfunded'],
      description:
        'unfunded while the treasury has not paid for the shared address lookup table that long deploys need (the workers make it within ' +
        'seconds of the treasury holding enough SOL): the process stays ready and serves everything else; those deploys answer 503 ' +
        'treasury_unfunded meanwhile',
    },
    anchors: {
      enum: ['ok', 'off', 'delayed'],
      description: 'anchoring of the ledger head on Solana (GET /api/v1/anchors): off with ANCHOR_EVERY_ENTRIES=0, delayed while the treasury cannot pay for one (the process stays ready)',
    },
    anchors_reason: { type: 'string', description: 'with `anchors: "delayed"`: why, and what to fund' },
    treasury_address: { type: 'string', description: 'with `treasury: "unfunded"`: the treasury wallet to fund (a few thousandths of a SOL pay for the table)' },
    ledger_head: { type: 'integer', minimum: -1, description: 'the seq of the last ledger entry (-1 when empty)' },
    projected: { type: 'integer', minimum: -1, description: 'the seq every read model of this process has reached: the lowest of read_models' },
    lag: { type: 'integer', minimum: 0, description: 'ledger_head - projected, at least 0' },
    read_models: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: -1 },
      description: 'each read model (projection) by name, and the seq it has reached: each follows the ledger from a checkpoint of its own, so a new or rebuilt one catches up while the others serve',
    },
  },
};

/** GET /metrics: Prometheus text exposition. */
export const metricsResponse: JsonSchema = { type: 'string', description: 'Prometheus text exposition format 0.0.4' };

export const surfaceResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'version', 'routes'],
  properties: {
    ok: { const: true },
    version: { type: 'string', description: 'the interface version (as in the OpenAPI info)' },
    routes: {
      type: 'array',
      description: 'every route the server dispatches, in the order of its route table',
      items: {
        type: 'object',
        required: ['method', 'path', 'auth', 'summary'],
        properties: {
          method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE'] },
          path: { type: 'string', description: 'OpenAPI-style template, e.g. /api/v1/agents/{handle}' },
          auth: {
            type: 'string',
            enum: ['public', 'auth', 'optional'],
            description: '`auth` needs the bearer key (or X-API-Key); `optional` takes one to add what is yours; `public` needs none',
          },
          summary: { type: 'string' },
        },
      },
    },
  },
};

/**
 * GET /openapi.json: the document itself, in the OpenAPI format (which has no `ok`; its top-level fields are
 * fixed by that specification).
 */
export const openApiDocumentResponse: JsonSchema = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  description: 'an OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)',
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' },
    info: { type: 'object', required: ['title', 'version'] },
    servers: { type: 'array', items: { type: 'object', required: ['url'] } },
    tags: { type: 'array', items: { type: 'object', required: ['name'] } },
    paths: { type: 'object' },
    components: { type: 'object' },
  },
};

/**
 * The field the bundled local chain adds to its `getVersion` reply, which any Solana client already asks and a real
 * cluster answers without it: what it serves beside JSON-RPC at its own URL. A service told only SOLANA_RPC_URL asks
 * it at start to default PRICE_URL and JUPITER_URL to that URL.
 */
export const BUNDLED_CHAIN_FIELD = 'svc-bundled-chain';
export interface BundledChainIdentity {
  /** The Jupiter-compatible APIs served at the chain's URL: `price` (`/price/v3`), `swap` (`/swap/v1`). */
  serves: Array<'price' | 'swap'>;
}
