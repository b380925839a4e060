import { executeFlag, executedFields, unsignedFields } from './actions';
import { base58PublicKey, seq, untrustedField, WHOLE_UNITS_LIMIT } from './common';
import { refusesSecrets, type JsonSchema, type LiteralSchema } from './validator';

const mint = { ...base58PublicKey, description: 'the token mint (base58)' } as const satisfies LiteralSchema;
const slippage = (fallback: number, what: string) =>
  ({
    type: 'integer',
    minimum: 0,
    maximum: 5000,
    default: fallback,
    description: `basis points (500 = 5%) the ${what} may move against you; enforced on-chain as a minimum output`,
  }) as const satisfies LiteralSchema;
const priorityFee = (fallback: number) =>
  ({
    type: 'number',
    minimum: 0,
    maximum: 0.1,
    default: fallback,
    description: 'SOL paid as the priority fee (compute-unit price × limit)',
  }) as const satisfies LiteralSchema;
const percent = { type: 'number', minimum: 0.01, maximum: 100, description: 'share of your holding, 0.01-100; 100 is everything' } as const satisfies LiteralSchema;
const tokenAmount = { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: WHOLE_UNITS_LIMIT, description: 'whole tokens (UI units)' } as const satisfies LiteralSchema;
const venue: JsonSchema = {
  type: 'string',
  enum: ['pump', 'pump-amm', 'jupiter'],
  description: '`pump` the bonding curve, `pump-amm` the graduated PumpSwap pool, `jupiter` the aggregator',
};
const route: JsonSchema = { type: 'string', description: 'the route in words, e.g. "pump bonding curve: buy_exact_sol_in"' };
const link = { type: 'string', maxLength: 200, ...refusesSecrets } as const satisfies LiteralSchema;

export const deployBody = {
  type: 'object',
  required: ['name', 'symbol', 'image'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 32 },
    symbol: { type: 'string', minLength: 1, maxLength: 10 },
    description: { type: 'string', maxLength: 1000, ...refusesSecrets },
    image: {
      type: 'string',
      minLength: 1,
      maxLength: 6_000_000,
      description: 'an https URL, or a base64 data URL of a png, jpg, gif or webp image of at most 4 MB; the service hosts it (content-addressed)',
    },
    twitter: link,
    telegram: link,
    website: link,
    dev_buy_sol: { type: 'number', minimum: 0, maximum: 1000, default: 0, description: 'SOL to buy the new coin with, in the same transaction as the create' },
    slippage_bps: slippage(1000, 'dev buy'),
    mayhem: { type: 'boolean', default: false, description: 'create the coin in pump’s mayhem mode' },
    holder_reward: { type: 'boolean', default: false, description: 'the creator fee goes to the holders instead of you; irreversible, and such a coin cannot share fees' },
    fee_share: {
      type: 'boolean',
      description: 'default true: share the creator fee, 9,000 bps to you and 1,000 to the treasury (a second transaction); false keeps 100%',
    },
    metadata_uri: { type: 'string', minLength: 1, maxLength: 200, pattern: '^https?://', description: 'metadata JSON you host already; skips the hosting' },
    priority_fee_sol: priorityFee(0.0005),
    execute: executeFlag,
  },
} as const satisfies LiteralSchema;

const share: JsonSchema = {
  type: 'object',
  required: ['address', 'share_bps'],
  properties: { address: { type: 'string' }, share_bps: { type: 'integer' } },
};

export const deployResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'mint', 'bonding_curve', 'metadata_uri', 'dev_buy', 'executed', 'fee_share'],
  properties: {
    ok: { const: true },
    mint: { type: 'string' },
    bonding_curve: { type: 'string' },
    creator: { type: 'string', description: 'the creator the curve records: your wallet, or the holder-rewards account of a holder_reward coin' },
    name: { type: 'string' },
    symbol: { type: 'string' },
    description: { type: ['string', 'null'] },
    metadata_uri: { type: 'string', description: 'the hosted metadata JSON (content-addressed), or the one you gave' },
    image: { type: ['string', 'null'], description: 'the hosted image' },
    links: {
      type: 'object',
      properties: { twitter: { type: 'string' }, telegram: { type: 'string' }, website: { type: 'string' } },
      description: 'the links given, as the metadata carries them',
    },
    mayhem: { type: 'boolean' },
    holder_reward: { type: 'boolean' },
    dev_buy: {
      type: 'object',
      properties: { sol: { type: 'number' }, quoted_tokens: { type: 'number' }, min_tokens: { type: 'number' } },
    },
    executed: { type: 'boolean' },
    ...executedFields,
    ...unsignedFields,
    fee_share: {
      type: 'object',
      required: ['status', 'shares'],
      properties: {
        status: { type: 'string', enum: ['active', 'pending', 'off'], description: '`active` once the sharing config is confirmed, `pending` until then (finish it with POST /api/v1/tokens/{mint}/share), `off` when not sharing' },
        shares: { type: 'array', items: share },
        signature: { type: ['string', 'null'], description: 'the sharing transaction (the second one)' },
        transaction: { type: 'string', description: 'executed=false: the sharing transaction to sign and send after the create landed' },
        reference: { type: 'string', description: 'executed=false: the read-only key by which the service finds the sharing transaction on-chain' },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' } },
          description: 'why the sharing did not land, when it is pending',
        },
      },
    },
  },
};

export const buyBody = {
  type: 'object',
  required: ['mint', 'amount_sol'],
  additionalProperties: false,
  properties: {
    mint,
    amount_sol: { type: 'number', exclusiveMinimum: 0, maximum: 100_000, description: 'SOL to spend, fees included' },
    slippage_bps: slippage(500, 'price'),
    priority_fee_sol: priorityFee(0.0002),
    execute: executeFlag,
  },
} as const satisfies LiteralSchema;

const tradeFields: Record<string, JsonSchema> = {
  venue,
  route,
  mint: { type: 'string' },
  executed: { type: 'boolean' },
  ...executedFields,
  ...unsignedFields,
};

export const buyResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'venue', 'route', 'spent_sol', 'quoted_tokens', 'executed'],
  properties: {
    ok: { const: true },
    ...tradeFields,
    spent_sol: { type: 'number', description: 'SOL spent, venue fees included' },
    quoted_tokens: { type: 'number', description: 'tokens the quote expects' },
    min_tokens: { type: 'number', description: 'the floor enforced on-chain' },
  },
};

const sellOrBurnAmount = {
  mint,
  percent,
  amount: tokenAmount,
};

export const sellBody = {
  type: 'object',
  required: ['mint'],
  additionalProperties: false,
  properties: {
    ...sellOrBurnAmount,
    slippage_bps: slippage(500, 'price'),
    close_token_account: { type: 'boolean', description: 'default true on a full sell: close the emptied token account and reclaim its rent' },
    priority_fee_sol: priorityFee(0.0002),
    execute: executeFlag,
  },
} as const satisfies LiteralSchema;

export const sellResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'venue', 'route', 'sold_tokens', 'quoted_sol', 'executed'],
  properties: {
    ok: { const: true },
    ...tradeFields,
    sold_tokens: { type: 'number' },
    quoted_sol: { type: 'number', description: 'SOL the quote expects, after venue fees' },
    min_sol: { type: 'number', description: 'the floor enforced on-chain' },
    closed_token_account: { type: 'boolean', description: 'a full sell closed the emptied token account, returning its rent' },
  },
};

export const burnBody = {
  type: 'object',
  required: ['mint'],
  additionalProperties: false,
  properties: { ...sellOrBurnAmount, execute: executeFlag },
} as const satisfies LiteralSchema;

export const burnResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'burned_tokens', 'supply_before', 'supply_after_estimate', 'executed'],
  properties: {
    ok: { const: true },
    mint: { type: 'string' },
    burned_tokens: { type: 'number' },
    supply_before: { type: 'number' },
    supply_after_estimate: { type: 'number' },
    closed_token_account: { type: 'boolean' },
    executed: { type: 'boolean' },
    ...executedFields,
    ...unsignedFields,
  },
};

export const swapBody = {
  type: 'object',
  required: ['input_mint', 'output_mint', 'amount'],
  additionalProperties: false,
  properties: {
    input_mint: { ...base58PublicKey, description: 'what you pay with; SOL is the wrapped-SOL mint So11111111111111111111111111111111111111112' },
    output_mint: { ...base58PublicKey, description: 'what you receive' },
    amount: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: WHOLE_UNITS_LIMIT, description: 'whole units of input_mint' },
    slippage_bps: slippage(100, 'price'),
    priority_fee_sol: priorityFee(0.0002),
    execute: executeFlag,
  },
} as const satisfies LiteralSchema;

export const swapResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'venue', 'route', 'input_mint', 'output_mint', 'in_amount', 'quoted_out', 'executed'],
  properties: {
    ok: { const: true },
    venue,
    route,
    input_mint: { type: 'string' },
    output_mint: { type: 'string' },
    in_amount: { type: 'number', description: 'whole units of input_mint' },
    quoted_out: { type: 'number', description: 'whole units of output_mint the aggregator quotes' },
    min_out: { type: 'number', description: 'the floor enforced on-chain' },
    price_impact_pct: { type: 'number' },
    executed: { type: 'boolean' },
    ...executedFields,
    ...unsignedFields,
  },
};

export const quoteQuery = {
  type: 'object',
  required: ['mint', 'side', 'amount'],
  additionalProperties: false,
  properties: {
    mint,
    side: { type: 'string', enum: ['buy', 'sell'] },
    amount: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: WHOLE_UNITS_LIMIT, description: 'SOL for a buy, whole tokens for a sell' },
    slippage_bps: slippage(500, 'price'),
  },
} as const satisfies LiteralSchema;

export const quoteResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'venue', 'side', 'in_amount', 'expected_out', 'min_out', 'fees', 'price_impact_pct', 'route'],
  properties: {
    ok: { const: true },
    venue,
    route,
    mint: { type: 'string' },
    side: { type: 'string', enum: ['buy', 'sell'] },
    in_amount: { type: 'number', description: 'SOL for a buy, whole tokens for a sell' },
    expected_out: { type: 'number', description: 'whole tokens for a buy, SOL for a sell' },
    min_out: { type: 'number', description: 'expected_out less the slippage (default 500 bps): the floor a trade would enforce' },
    slippage_bps: { type: 'integer' },
    fees: { type: 'object', properties: { sol: { type: 'number', description: 'venue fees (protocol, creator, LP) in SOL' } } },
    price_impact_pct: { type: 'number' },
  },
};

export const tokenParams = {
  type: 'object',
  required: ['mint'],
  properties: { mint },
} as const satisfies LiteralSchema;

export const listTokensQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    before: { ...seq, minimum: 0, description: 'page: the `next_before` of the previous page' },
  },
} as const satisfies LiteralSchema;

export const tokenIntel: JsonSchema = {
  type: 'object',
  required: ['mint', 'venue'],
  properties: {
    mint: { type: 'string' },
    venue,
    name: { type: ['string', 'null'] },
    symbol: { type: ['string', 'null'] },
    price_sol: { type: ['number', 'null'] },
    price_usd: { type: ['number', 'null'] },
    market_cap_usd: { type: ['number', 'null'] },
    progress: { type: ['number', 'null'], description: 'bonding-curve progress, 0-1 (1 once graduated)' },
    bonding_curve: { type: ['string', 'null'] },
    creator: { type: ['string', 'null'] },
    society_posts: { type: 'array', items: { type: 'object' } },
    links: { type: 'object' },
    reserves: { type: ['object', 'null'], description: 'the curve’s or the pool’s reserves' },
    pool: { type: ['object', 'null'], description: 'the graduated PumpSwap pool' },
    markets: { type: 'array', items: { type: 'object' }, description: 'external market listings' },
    deployed_by: { type: ['object', 'null'], description: 'the citizen who deployed it through this service' },
  },
};

/**
 * A coin deployed through the service as the ledger records it (a citizen's profile and record, search): the
 * deploy and its trades here, without the chain figures GET /api/v1/tokens/{mint} adds.
 */
export const deployedToken: JsonSchema = {
  type: 'object',
  required: [
    'mint',
    'name',
    'symbol',
    'description',
    'image',
    'metadata_uri',
    'links',
    'bonding_curve',
    'creator',
    'mayhem',
    'holder_reward',
    'dev_buy',
    'fee_share',
    'deployed_by',
    'wallet',
    'deployed_at',
    'seq',
    'signature',
    'trades',
    'last_action_seq',
  ],
  properties: {
    mint: { type: 'string' },
    name: { type: 'string' },
    symbol: { type: 'string' },
    description: { type: ['string', 'null'] },
    image: { type: ['string', 'null'], description: 'the hosted image' },
    metadata_uri: { type: ['string', 'null'] },
    links: { type: 'object', description: 'twitter, telegram and website as the deployer gave them' },
    bonding_curve: { type: ['string', 'null'] },
    creator: { type: ['string', 'null'] },
    mayhem: { type: 'boolean' },
    holder_reward: { type: 'boolean' },
    dev_buy: { type: 'object', properties: { sol: { type: 'number' }, quoted_tokens: { type: 'number' }, min_tokens: { type: 'number' } } },
    fee_share: {
      type: 'object',
      required: ['status', 'shares', 'signature'],
      properties: {
        status: { type: 'string', enum: ['active', 'pending', 'off'] },
        shares: { type: 'array', items: share },
        signature: { type: ['string', 'null'] },
      },
    },
    deployed_by: { type: 'object', required: ['agent_id', 'handle'], properties: { agent_id: { type: 'string' }, handle: { type: ['string', 'null'] } } },
    wallet: { type: 'string', description: 'the deployer’s wallet' },
    deployed_at: { type: 'integer', description: 'ms' },
    seq: { type: 'integer', description: 'the ledger position of the deploy' },
    signature: { type: 'string', description: 'the deploy transaction' },
    trades: {
      type: 'object',
      required: ['buys', 'sells', 'buy_volume_sol', 'sell_volume_sol', 'last_trade_at'],
      properties: {
        buys: { type: 'integer' },
        sells: { type: 'integer' },
        buy_volume_sol: { type: 'number' },
        sell_volume_sol: { type: 'number' },
        last_trade_at: { type: ['integer', 'null'] },
      },
      description: 'trades recorded through this service',
    },
    last_action_seq: { type: 'integer', description: 'the ledger position of the last action that named the coin (its deploy at least)' },
    untrusted: untrustedField,
  },
};
