import { PublicKey } from '@solana/web3.js';
import { JupiterError } from './errors';
import { Fill, fillExactIn } from './fills';
import type { QuoteRequest } from './params';
import { ChainReader, SOL_MINT, Venue, findVenue, readMint } from './venues';

export const VENUE_LABELS = { curve: 'Pump.fun', pool: 'Pump.fun Amm' } as const satisfies Record<Venue['kind'], string>;

export interface QuoteResponse {
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
  otherAmountThreshold: string;
  swapMode: 'ExactIn';
  slippageBps: number;
  platformFee: null;
  priceImpactPct: string;
  routePlan: {
    swapInfo: { ammKey: string; label: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string; feeAmount: string; feeMint: string };
    percent: number;
    bps: number;
  }[];
  contextSlot: number;
  timeTaken: number;
}

/** ExactIn's threshold: the least output the swap may deliver, which the swap instruction enforces on-chain. */
export const minimumOut = (outAmount: bigint, slippageBps: number): bigint => (outAmount * BigInt(10_000 - slippageBps)) / 10_000n;

/** A fraction as Jupiter prints it: plain decimal text, never exponent notation. */
export function decimalText(value: number): string {
  if (!Number.isFinite(value) || value <= 0) return '0';
  const text = value.toFixed(18).replace(/0+$/, '').replace(/\.$/, '');
  return text === '' ? '0' : text;
}

function unroutable(chain: ChainReader, request: QuoteRequest): JupiterError {
  for (const mint of [request.inputMint, request.outputMint]) {
    if (!mint.equals(SOL_MINT) && !readMint(chain, mint)) return new JupiterError(400, 'TOKEN_NOT_TRADABLE', `The token ${mint.toBase58()} is not tradable`);
  }
  return new JupiterError(400, 'COULD_NOT_FIND_ANY_ROUTE', 'Could not find any route');
}

export interface RouteLeg {
  venue: Venue;
  inputMint: PublicKey;
  outputMint: PublicKey;
}

/**
 * The venue that trades the pair directly, or else two legs through SOL: the input coin sold on its own venue and
 * the output coin bought on its own (each the bonding curve or the PumpSwap pool, whichever holds the coin now).
 */
export function findRoute(chain: ChainReader, inputMint: PublicKey, outputMint: PublicKey): RouteLeg[] | null {
  const direct = findVenue(chain, inputMint, outputMint);
  if (direct) return [{ venue: direct, inputMint, outputMint }];
  if (inputMint.equals(SOL_MINT) || outputMint.equals(SOL_MINT)) return null;
  const sell = findVenue(chain, inputMint, SOL_MINT);
  const buy = sell && findVenue(chain, SOL_MINT, outputMint);
  if (!sell || !buy) return null;
  return [
    { venue: sell, inputMint, outputMint: SOL_MINT },
    { venue: buy, inputMint: SOL_MINT, outputMint },
  ];
}

/** Each leg spends all that the leg before it yields. */
function fillRoute(route: readonly RouteLeg[], amount: bigint): Fill[] {
  const fills: Fill[] = [];
  let carried = amount;
  for (const leg of route) {
    const fill = fillExactIn(leg.venue, leg.inputMint, carried);
    fills.push(fill);
    carried = fill.outAmount;
  }
  return fills;
}

export function quote(chain: ChainReader, slot: number, request: QuoteRequest, startedAt: number, now: () => number): QuoteResponse {
  const route = findRoute(chain, request.inputMint, request.outputMint);
  if (!route) throw unroutable(chain, request);
  const fills = fillRoute(route, request.amount);
  const outAmount = fills[fills.length - 1]!.outAmount;
  // What reaches the user is each leg's share of what it was offered, so the legs' impacts compound.
  const priceImpact = fills.length === 1 ? fills[0]!.priceImpact : 1 - fills.reduce((kept, fill) => kept * (1 - fill.priceImpact), 1);
  const mint = (key: PublicKey) => key.toBase58();
  return {
    inputMint: mint(request.inputMint),
    inAmount: request.amount.toString(),
    outputMint: mint(request.outputMint),
    outAmount: outAmount.toString(),
    otherAmountThreshold: minimumOut(outAmount, request.slippageBps).toString(),
    swapMode: 'ExactIn',
    slippageBps: request.slippageBps,
    platformFee: null,
    priceImpactPct: decimalText(priceImpact),
    routePlan: route.map((leg, i) => ({
      swapInfo: {
        ammKey: leg.venue.address.toBase58(),
        label: VENUE_LABELS[leg.venue.kind],
        inputMint: mint(leg.inputMint),
        outputMint: mint(leg.outputMint),
        inAmount: fills[i]!.inAmount.toString(),
        outAmount: fills[i]!.outAmount.toString(),
        feeAmount: fills[i]!.feeAmount.toString(),
        feeMint: mint(fills[i]!.feeMint),
      },
      percent: 100,
      bps: 10_000,
    })),
    contextSlot: slot,
    timeTaken: (now() - startedAt) / 1000,
  };
}
