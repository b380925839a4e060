import { PublicKey } from '@solana/web3.js';
import { JupiterError } from './errors';
import { fillExactIn } from './fills';
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

export function quote(chain: ChainReader, slot: number, request: QuoteRequest, startedAt: number, now: () => number): QuoteResponse {
  const venue = findVenue(chain, request.inputMint, request.outputMint);
  if (!venue) throw unroutable(chain, request);
  const fill = fillExactIn(venue, request.inputMint, request.amount);
  const mint = (key: PublicKey) => key.toBase58();
  return {
    inputMint: mint(request.inputMint),
    inAmount: fill.inAmount.toString(),
    outputMint: mint(request.outputMint),
    outAmount: fill.outAmount.toString(),
    otherAmountThreshold: minimumOut(fill.outAmount, request.slippageBps).toString(),
    swapMode: 'ExactIn',
    slippageBps: request.slippageBps,
    platformFee: null,
    priceImpactPct: decimalText(fill.priceImpact),
    routePlan: [
      {
        swapInfo: {
          ammKey: venue.address.toBase58(),
          label: VENUE_LABELS[venue.kind],
          inputMint: mint(request.inputMint),
          outputMint: mint(request.outputMint),
          inAmount: fill.inAmount.toString(),
          outAmount: fill.outAmount.toString(),
          feeAmount: fill.feeAmount.toString(),
          feeMint: mint(fill.feeMint),
        },
        percent: 100,
        bps: 10_000,
      },
    ],
    contextSlot: slot,
    timeTaken: (now() - startedAt) / 1000,
  };
}
