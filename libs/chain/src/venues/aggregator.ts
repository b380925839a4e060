import {
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type AddressLookupTableAccount,
  type Connection,
  type TransactionInstruction,
} from '@solana/web3.js';
import { ChainError } from '../errors';

/** Jupiter's Swap API v1 quote, as it answers (amounts are strings of base units). */
export interface AggregatorQuote {
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
  otherAmountThreshold: string;
  swapMode: string;
  slippageBps: number;
  priceImpactPct: string;
  routePlan: { swapInfo: { ammKey: string; label?: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string; feeAmount: string; feeMint: string }; percent: number }[];
  [key: string]: unknown;
}

const TIMEOUT_MS = 10_000;

/**
 * A Jupiter-compatible aggregator over HTTP (`/swap/v1/quote`, `/swap/v1/swap`): api.jup.ag on a real cluster,
 * the bundled chain's own routes otherwise. Its swap transaction is taken apart into instructions (lookup tables
 * resolved), so the action pipeline compiles, references and signs it like any other action.
 */
export class Aggregator {
  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async quote(inputMint: PublicKey, outputMint: PublicKey, amount: bigint, slippageBps: number): Promise<AggregatorQuote> {
    const query = new URLSearchParams({
      inputMint: inputMint.toBase58(),
      outputMint: outputMint.toBase58(),
      amount: amount.toString(),
      slippageBps: String(slippageBps),
      swapMode: 'ExactIn',
    });
    const quote = (await this.call(`/swap/v1/quote?${query}`, { method: 'GET' })) as AggregatorQuote;
    // What is signed later is held to this quote, so the quote is held to what was asked: these mints, this amount, this slippage.
    const floor = (BigInt(quote.outAmount ?? 0) * BigInt(10_000 - slippageBps)) / 10_000n;
    const asked = quote.inputMint === inputMint.toBase58() && quote.outputMint === outputMint.toBase58() && String(quote.inAmount) === amount.toString();
    if (!asked || BigInt(quote.otherAmountThreshold ?? 0) < floor) {
      throw new ChainError('aggregator_rejected', 'the aggregator answered a quote for another trade, or with a minimum out below the slippage asked; nothing was signed or sent');
    }
    return quote;
  }

  async swapInstructions(
    connection: Connection,
    quote: AggregatorQuote,
    user: PublicKey,
    priorityFeeLamports: bigint,
  ): Promise<{ instructions: TransactionInstruction[]; lookupTables: AddressLookupTableAccount[] }> {
    const body = {
      quoteResponse: quote,
      userPublicKey: user.toBase58(),
      wrapAndUnwrapSol: true,
      dynamicComputeUnitLimit: true,
      ...(priorityFeeLamports > 0n ? { prioritizationFeeLamports: Number(priorityFeeLamports) } : {}),
    };
    const answer = (await this.call('/swap/v1/swap', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })) as {
      swapTransaction?: string;
    };
    if (typeof answer.swapTransaction !== 'string') throw new Error('the aggregator answered a swap without swapTransaction');
    const transaction = VersionedTransaction.deserialize(Buffer.from(answer.swapTransaction, 'base64'));
    const lookupTables = await Promise.all(
      transaction.message.addressTableLookups.map(async (lookup) => {
        const table = (await connection.getAddressLookupTable(lookup.accountKey, { commitment: 'confirmed' })).value;
        if (!table) throw new Error(`the aggregator's lookup table ${lookup.accountKey.toBase58()} does not exist`);
        return table;
      }),
    );
    const message = TransactionMessage.decompile(transaction.message, { addressLookupTableAccounts: lookupTables });
    return { instructions: message.instructions, lookupTables };
  }

  private async call(path: string, init: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (error) {
      throw ChainError.refusal('unavailable', `the aggregator at ${new URL(this.baseUrl).host} could not be reached (${(error as Error).message}); nothing was sent`, {}, 5);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.ok && json !== undefined) return json;
    if (response.status >= 500 || response.status === 429 || json === undefined) {
      throw ChainError.refusal('unavailable', `the aggregator answered ${response.status}; nothing was sent, try again`, {}, 5);
    }
    const error = json as { error?: string; errorCode?: string };
    throw ChainError.refusal('invalid_request', `the aggregator found no trade: ${error.error ?? `status ${response.status}`}`, {
      aggregator_code: error.errorCode ?? null,
    });
  }
}
