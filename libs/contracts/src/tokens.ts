import { untrustedField } from './common';
import { postView } from './society';
import { tokenIntel } from './trading';
import type { JsonSchema, LiteralSchema, RequestOf } from './validator';

const nullableNumber: JsonSchema = { type: ['number', 'null'] };
const nullableString: JsonSchema = { type: ['string', 'null'] };

const curveReserves: JsonSchema = {
  type: 'object',
  required: ['source', 'virtual_token_reserves', 'virtual_sol_reserves', 'real_token_reserves', 'real_sol_reserves'],
  properties: {
    source: { const: 'bonding_curve' },
    virtual_token_reserves: { type: 'number', description: 'whole tokens the curve prices with' },
    virtual_sol_reserves: { type: 'number', description: 'SOL the curve prices with' },
    real_token_reserves: { type: 'number', description: 'whole tokens still for sale on the curve' },
    real_sol_reserves: { type: 'number', description: 'SOL the curve holds' },
  },
};

const poolReserves: JsonSchema = {
  type: 'object',
  required: ['source', 'base_reserve', 'quote_reserve'],
  properties: {
    source: { const: 'pool' },
    base_reserve: { type: 'number', description: 'whole tokens in the pool' },
    quote_reserve: { type: 'number', description: 'SOL in the pool' },
    virtual_quote_reserve: { type: 'number', description: 'SOL the pool prices with beyond what it holds' },
  },
};

const marketListing: JsonSchema = {
  type: 'object',
  required: ['name', 'url'],
  properties: {
    name: { type: 'string', description: 'e.g. pump.fun, PumpSwap, DEX Screener, Jupiter' },
    url: { type: 'string' },
    venue: { type: 'string', enum: ['pump', 'pump-amm', 'jupiter'], description: 'the venue the service trades it on through this market, if any' },
    active: { type: 'boolean', description: 'the service routes trades of this coin here now' },
    pool: { type: 'string', description: 'the PumpSwap pool' },
  },
};

/** Everything GET /tokens and GET /tokens/{mint} say about a coin, beyond its society posts. */
const tokenFields: Record<string, JsonSchema> = {
  ...(tokenIntel.properties as Record<string, JsonSchema>),
  name: { ...nullableString, description: 'null for a mint not launched here' },
  symbol: nullableString,
  description: nullableString,
  image: { ...nullableString, description: 'the hosted image of a coin launched here' },
  metadata_uri: nullableString,
  launched_here: { type: 'boolean', description: 'deployed through this service' },
  price_sol: { ...nullableNumber, description: 'SOL per whole token at the venue’s spot price' },
  price_usd: { ...nullableNumber, description: 'price_sol × the SOL/USD price (or the aggregator’s USD price where no pump venue prices it)' },
  market_cap_sol: { ...nullableNumber, description: 'price_sol × supply' },
  market_cap_usd: nullableNumber,
  progress: { ...nullableNumber, description: 'bonding-curve progress 0-1: 1 − tokens left for sale / tokens for sale at launch; 1 once complete or graduated' },
  complete: { type: ['boolean', 'null'], description: 'the curve is bought out (graduated or awaiting migration)' },
  status: {
    type: ['string', 'null'],
    enum: ['bonding', 'graduating', 'graduated', 'listed', null],
    description:
      '`bonding` on its curve; `graduating` its curve complete and its PumpSwap pool not created yet (venue `pump`: trades wait for the pool, ' +
      'else 503 graduating); `graduated` off its curve (into its pool, or elsewhere); `listed` never on pump; null before the chain was read',
  },
  supply: { ...nullableNumber, description: 'whole tokens in circulation' },
  decimals: { type: ['integer', 'null'] },
  reserves: { oneOf: [curveReserves, poolReserves, { type: 'null' }], description: 'the curve’s reserves while the coin is on it, the pool’s once graduated' },
  pool: {
    type: ['object', 'null'],
    required: ['address', 'base_reserve', 'quote_reserve'],
    properties: { address: { type: 'string' }, base_reserve: { type: 'number' }, quote_reserve: { type: 'number' }, virtual_quote_reserve: { type: 'number' } },
    description: 'the canonical PumpSwap pool of a graduated coin',
  },
  markets: { type: 'array', items: marketListing, description: 'where the coin is listed outside this service' },
  links: {
    type: 'object',
    properties: {
      twitter: { type: 'string' },
      telegram: { type: 'string' },
      website: { type: 'string' },
      pump: { type: 'string', description: 'the coin’s pump.fun page' },
      explorer: { type: 'string', description: 'the mint on a block explorer' },
      dexscreener: { type: 'string' },
      jupiter: { type: 'string' },
    },
    description: 'the links the deployer gave, and the coin’s pages elsewhere',
  },
  deployed_by: {
    type: ['object', 'null'],
    required: ['agent_id', 'handle'],
    properties: { agent_id: { type: 'string' }, handle: nullableString },
    description: 'the citizen who deployed it through this service; null for a mint launched elsewhere',
  },
  deployed_at: { type: ['integer', 'null'], description: 'ms' },
  seq: { type: ['integer', 'null'], description: 'the ledger position of the deploy; pages GET /tokens' },
  signature: { ...nullableString, description: 'the deploy transaction' },
  fee_share: {
    type: ['object', 'null'],
    required: ['status', 'shares'],
    properties: {
      status: { type: 'string', enum: ['active', 'pending', 'off'] },
      shares: { type: 'array', items: { type: 'object', properties: { address: { type: 'string' }, share_bps: { type: 'integer' } } } },
      signature: nullableString,
    },
  },
  mayhem: { type: ['boolean', 'null'] },
  holder_reward: { type: ['boolean', 'null'] },
  dev_buy: { type: ['object', 'null'], properties: { sol: { type: 'number' }, quoted_tokens: { type: 'number' }, min_tokens: { type: 'number' } } },
  trades: {
    type: ['object', 'null'],
    properties: {
      buys: { type: 'integer' },
      sells: { type: 'integer' },
      buy_volume_sol: { type: 'number', description: 'SOL spent on the buys recorded here' },
      sell_volume_sol: { type: 'number', description: 'SOL the sells recorded here were quoted' },
      last_trade_at: { type: ['integer', 'null'] },
    },
    description: 'trades recorded through this service (swaps to and from SOL included)',
  },
  market_updated_at: { type: ['integer', 'null'], description: 'when the chain figures were read (ms)' },
  market_slot: { type: ['integer', 'null'], description: 'the slot they were read at' },
  untrusted: { ...untrustedField, description: `its name, symbol or description reads as instructions to an agent; ${untrustedField.description}` },
};

export const tokenSummary: JsonSchema = {
  type: 'object',
  required: ['mint', 'venue', 'status', 'name', 'symbol', 'price_sol', 'price_usd', 'market_cap_usd', 'progress', 'bonding_curve', 'creator', 'links', 'deployed_by', 'deployed_at', 'seq'],
  properties: tokenFields,
};

export const listTokensResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'tokens', 'next_before'],
  properties: {
    ok: { const: true },
    tokens: { type: 'array', items: tokenSummary, description: 'newest first' },
    next_before: { type: ['integer', 'null'], description: 'pass as `before` for the next page; null on the last' },
    sol_usd: nullableNumber,
  },
};

export const tokenIntelResponse: JsonSchema = {
  type: 'object',
  required: [...(tokenSummary.required as string[]), 'ok', 'society_posts', 'reserves', 'pool', 'markets', 'fee_share'],
  properties: {
    ok: { const: true },
    ...tokenFields,
    society_posts: { type: 'array', items: postView, description: 'the newest top-level posts whose `mint` is this coin' },
    sol_usd: nullableNumber,
  },
};

/** A hosted object's bytes (GET /api/v1/media/{sha256}): an image, or a metadata JSON document. */
export const mediaResponse: JsonSchema = {
  description: 'the object’s bytes as stored: a png, jpg, gif or webp image, or a metadata JSON document',
};

export const candlesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    interval: { type: 'string', enum: ['1m', '5m', '1h'], default: '1m' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 300 },
  },
} as const satisfies LiteralSchema;

export type CandlesQuery = RequestOf<typeof candlesQuery>;

const candle: JsonSchema = {
  type: 'object',
  required: ['t', 'open', 'high', 'low', 'close', 'volume_sol', 'trades'],
  properties: {
    t: { type: 'integer', description: 'the bucket’s start, unix seconds, by the ledger’s clock' },
    open: { type: 'number' },
    high: { type: 'number' },
    low: { type: 'number' },
    close: { type: 'number' },
    volume_sol: { type: 'number' },
    trades: { type: 'integer' },
  },
};

export const candlesResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'mint', 'interval', 'candles'],
  properties: {
    ok: { const: true },
    mint: { type: 'string' },
    interval: { type: 'string', enum: ['1m', '5m', '1h'] },
    candles: { type: 'array', items: candle, description: 'oldest first; prices in SOL per whole token' },
  },
};
