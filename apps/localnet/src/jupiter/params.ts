import { PublicKey } from '@solana/web3.js';
import { bodyValidator, queryValidator } from '@svc/contracts';
import { JupiterError, invalidRequest } from './errors';

const PUBKEY = { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' };
const U64_TEXT = { type: 'string', pattern: '^[0-9]{1,20}$' };
const U64_MAX = (1n << 64n) - 1n;

export interface QuoteRequest {
  inputMint: PublicKey;
  outputMint: PublicKey;
  amount: bigint;
  slippageBps: number;
}

const quoteQuery = queryValidator({
  type: 'object',
  required: ['inputMint', 'outputMint', 'amount'],
  properties: {
    inputMint: PUBKEY,
    outputMint: PUBKEY,
    amount: U64_TEXT,
    slippageBps: { type: 'integer', minimum: 0, maximum: 10_000, default: 50 },
    swapMode: { type: 'string', enum: ['ExactIn', 'ExactOut'], default: 'ExactIn' },
  },
});

function pubkey(text: string, field: string): PublicKey {
  try {
    const key = new PublicKey(text);
    if (key.toBase58() === text) return key;
  } catch {
    // reported below, as any malformed field is
  }
  throw invalidRequest(`Query parameter ${field} cannot be parsed: invalid public key`);
}

function u64(text: string, field: string): bigint {
  const value = BigInt(text);
  if (value > U64_MAX) throw invalidRequest(`${field} does not fit in a u64`);
  return value;
}

/** GET /swap/v1/quote's query, checked the way Jupiter checks it. */
export function parseQuoteRequest(search: URLSearchParams): QuoteRequest {
  const query: Record<string, string | number> = Object.fromEntries(search);
  const invalid = quoteQuery(query);
  if (invalid) throw invalidRequest(`Query parameter ${invalid.field || 'query'} cannot be parsed: ${invalid.message}`);
  if (query.swapMode !== 'ExactIn') throw new JupiterError(400, 'NOT_SUPPORTED', 'Only swapMode=ExactIn is supported on the localnet');
  const inputMint = pubkey(String(query.inputMint), 'inputMint');
  const outputMint = pubkey(String(query.outputMint), 'outputMint');
  if (inputMint.equals(outputMint)) throw new JupiterError(400, 'CIRCULAR_ARBITRAGE_IS_DISABLED', 'Input and output mints are not allowed to be equal');
  const amount = u64(String(query.amount), 'amount');
  if (amount === 0n) throw invalidRequest('Query parameter amount cannot be parsed: amount must be greater than 0');
  return { inputMint, outputMint, amount, slippageBps: Number(query.slippageBps) };
}

/** One step of a quote's route plan: a venue and what the quote expects it to take in and give out. */
export interface SwapLeg {
  ammKey: PublicKey;
  inputMint: PublicKey;
  outputMint: PublicKey;
  inAmount: bigint;
  outAmount: bigint;
}

export interface SwapRequest {
  userPublicKey: PublicKey;
  inputMint: PublicKey;
  outputMint: PublicKey;
  inAmount: bigint;
  otherAmountThreshold: bigint;
  /** One leg, or two through SOL; a leg's mints and amounts are checked only when there are two. */
  legs: SwapLeg[];
  asLegacyTransaction: boolean;
}

/** The most steps a localnet route has: coin → SOL → coin. */
export const MAX_ROUTE_STEPS = 2;

const swapBody = bodyValidator({
  type: 'object',
  required: ['quoteResponse', 'userPublicKey'],
  properties: {
    userPublicKey: PUBKEY,
    wrapAndUnwrapSol: { type: 'boolean', default: true },
    asLegacyTransaction: { type: 'boolean', default: false },
    quoteResponse: {
      type: 'object',
      required: ['inputMint', 'outputMint', 'inAmount', 'outAmount', 'otherAmountThreshold', 'swapMode', 'routePlan'],
      properties: {
        inputMint: PUBKEY,
        outputMint: PUBKEY,
        inAmount: U64_TEXT,
        outAmount: U64_TEXT,
        otherAmountThreshold: U64_TEXT,
        swapMode: { type: 'string', enum: ['ExactIn', 'ExactOut'] },
        routePlan: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['swapInfo'],
            properties: {
              swapInfo: {
                type: 'object',
                required: ['ammKey'],
                properties: { ammKey: PUBKEY, inputMint: PUBKEY, outputMint: PUBKEY, inAmount: U64_TEXT, outAmount: U64_TEXT },
              },
            },
          },
        },
      },
    },
  },
});

interface RouteStep {
  swapInfo: { ammKey: string; inputMint?: string; outputMint?: string; inAmount?: string; outAmount?: string };
}

/** A multi-step plan must chain: each step takes what the one before gives, from the quote's input to its output. */
function routeLegs(plan: RouteStep[], inputMint: PublicKey, outputMint: PublicKey, inAmount: bigint, outAmount: bigint): SwapLeg[] {
  if (plan.length > MAX_ROUTE_STEPS) throw new JupiterError(400, 'NOT_SUPPORTED', `Routes of more than ${MAX_ROUTE_STEPS} steps are not supported on the localnet`);
  const field = (i: number, name: keyof RouteStep['swapInfo']): string => {
    const value = plan[i]!.swapInfo[name];
    if (value === undefined) throw invalidRequest(`quoteResponse.routePlan.${i}.swapInfo.${name} is required for a route of ${plan.length} steps`);
    return value;
  };
  if (plan.length === 1) {
    return [{ ammKey: pubkey(field(0, 'ammKey'), 'quoteResponse.routePlan.0.swapInfo.ammKey'), inputMint, outputMint, inAmount, outAmount }];
  }
  const legs = plan.map((_, i) => ({
    ammKey: pubkey(field(i, 'ammKey'), `quoteResponse.routePlan.${i}.swapInfo.ammKey`),
    inputMint: pubkey(field(i, 'inputMint'), `quoteResponse.routePlan.${i}.swapInfo.inputMint`),
    outputMint: pubkey(field(i, 'outputMint'), `quoteResponse.routePlan.${i}.swapInfo.outputMint`),
    inAmount: u64(field(i, 'inAmount'), `quoteResponse.routePlan.${i}.swapInfo.inAmount`),
    outAmount: u64(field(i, 'outAmount'), `quoteResponse.routePlan.${i}.swapInfo.outAmount`),
  }));
  const first = legs[0]!;
  const last = legs[legs.length - 1]!;
  const chained = legs.every((leg, i) => i === 0 || (leg.inputMint.equals(legs[i - 1]!.outputMint) && leg.inAmount === legs[i - 1]!.outAmount && leg.inAmount > 0n));
  if (!first.inputMint.equals(inputMint) || first.inAmount !== inAmount || !last.outputMint.equals(outputMint) || last.outAmount !== outAmount || !chained) {
    throw invalidRequest('quoteResponse.routePlan does not lead from inputMint to outputMint with the quote\'s amounts');
  }
  return legs;
}

/** POST /swap/v1/swap's body: the quote to execute and who executes it. */
export function parseSwapRequest(body: unknown): SwapRequest {
  const invalid = swapBody(body);
  if (invalid) throw invalidRequest(`Failed to deserialize the JSON body: ${invalid.message}`);
  const request = body as {
    userPublicKey: string;
    wrapAndUnwrapSol: boolean;
    asLegacyTransaction: boolean;
    quoteResponse: { inputMint: string; outputMint: string; inAmount: string; outAmount: string; otherAmountThreshold: string; swapMode: string; routePlan: RouteStep[] };
  };
  const quote = request.quoteResponse;
  if (quote.swapMode !== 'ExactIn') throw new JupiterError(400, 'NOT_SUPPORTED', 'Only ExactIn quotes are supported on the localnet');
  // The venue SDKs always wrap SOL into a temporary account and unwrap it after; there is no other path to build.
  if (!request.wrapAndUnwrapSol) throw new JupiterError(400, 'NOT_SUPPORTED', 'wrapAndUnwrapSol=false is not supported on the localnet');
  const inputMint = pubkey(quote.inputMint, 'quoteResponse.inputMint');
  const outputMint = pubkey(quote.outputMint, 'quoteResponse.outputMint');
  if (inputMint.equals(outputMint)) throw new JupiterError(400, 'CIRCULAR_ARBITRAGE_IS_DISABLED', 'Input and output mints are not allowed to be equal');
  const inAmount = u64(quote.inAmount, 'quoteResponse.inAmount');
  if (inAmount === 0n) throw invalidRequest('quoteResponse.inAmount must be greater than 0');
  const outAmount = u64(quote.outAmount, 'quoteResponse.outAmount');
  return {
    userPublicKey: pubkey(request.userPublicKey, 'userPublicKey'),
    inputMint,
    outputMint,
    inAmount,
    otherAmountThreshold: u64(quote.otherAmountThreshold, 'quoteResponse.otherAmountThreshold'),
    legs: routeLegs(quote.routePlan, inputMint, outputMint, inAmount, outAmount),
    asLegacyTransaction: request.asLegacyTransaction,
  };
}

/** GET /price/v3's `ids`: comma-separated mints; malformed ones are dropped, as unknown ones are. */
export function parsePriceIds(search: URLSearchParams): PublicKey[] {
  const ids = search.get('ids');
  if (!ids) throw invalidRequest('Query parameter ids is required');
  const parts = ids.split(',').map((id) => id.trim()).filter(Boolean);
  if (parts.length === 0) throw invalidRequest('Query parameter ids is required');
  if (parts.length > 50) throw invalidRequest('Query parameter ids accepts at most 50 mints');
  const keys: PublicKey[] = [];
  for (const part of parts) {
    try {
      keys.push(pubkey(part, 'ids'));
    } catch {
      // Jupiter leaves a mint it cannot price out of the answer; a malformed one is such a mint.
    }
  }
  return keys;
}
