import fc from 'fast-check';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { MintLayout, NATIVE_MINT, RawMint, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import BN from 'bn.js';
import { PUMP_SDK, getPumpProgram } from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, PUMP_AMM_SDK } from '@pump-fun/pump-swap-sdk';
import { JupiterError } from '../../apps/localnet/src/jupiter/errors';
import { fillExactIn } from '../../apps/localnet/src/jupiter/fills';
import { parsePriceIds, parseQuoteRequest, parseSwapRequest } from '../../apps/localnet/src/jupiter/params';
import { decimalText, minimumOut } from '../../apps/localnet/src/jupiter/quote';
import { curveBuyExactSolInData, poolBuyExactQuoteInData } from '../../apps/localnet/src/jupiter/swap';
import type { CurveVenue, MintInfo, PoolVenue } from '../../apps/localnet/src/jupiter/venues';
import { GENESIS_FEE_CONFIG, GENESIS_GLOBAL } from '../../apps/localnet/src/programs/pump/genesis';
import { afterBuy, buyCost, buyExactSolInTokens, chargesCreatorFee, curveFeeRates, feeSupply, sellProceeds, tradeFees } from '../../apps/localnet/src/programs/pump/math';
import { BondingCurve, encodeBondingCurve, encodeFeeConfig, encodeGlobal } from '../../apps/localnet/src/programs/pump/state';
import { newPool } from '../../apps/localnet/src/programs/pumpSwap/createPool';
import { GENESIS_GLOBAL_CONFIG } from '../../apps/localnet/src/programs/pumpSwap/genesis';
import { buyExactQuoteIn, sellExactBaseIn, tradeFees as poolTradeFees } from '../../apps/localnet/src/programs/pumpSwap/math';
import { encodeGlobalConfig, encodePool, isPumpPool } from '../../apps/localnet/src/programs/pumpSwap/state';
import { GENESIS_AMM_FEE_CONFIG } from '../../apps/localnet/src/programs/pumpFees/genesis';
import { encodeFeeConfig as encodeAmmFeeConfig } from '../../apps/localnet/src/programs/pumpFees/state';

const SOL = NATIVE_MINT.toBase58();
const MINT = Keypair.generate().publicKey;
const info = (data: Buffer) => ({ data, owner: PublicKey.default, lamports: 0, executable: false });

function mintInfo(address: PublicKey, supply: bigint, decimals: number, tokenProgram: PublicKey): MintInfo {
  const raw: RawMint = MintLayout.decode(Buffer.alloc(MintLayout.span));
  return { address, tokenProgram, raw: { ...raw, supply, decimals, isInitialized: true } };
}

describe('quote parameters', () => {
  const query = (params: Record<string, string>) => parseQuoteRequest(new URLSearchParams(params));
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return (error as JupiterError).errorCode;
    }
    return 'accepted';
  };

  it('reads mints, amount and the default slippage', () => {
    const request = query({ inputMint: SOL, outputMint: MINT.toBase58(), amount: '18446744073709551615' });
    expect(request.inputMint.toBase58()).toBe(SOL);
    expect(request.amount).toBe((1n << 64n) - 1n);
    expect(request.slippageBps).toBe(50);
  });

  it.each([
    [{ inputMint: SOL, outputMint: SOL, amount: '1' }, 'CIRCULAR_ARBITRAGE_IS_DISABLED'],
    [{ inputMint: SOL, outputMint: MINT.toBase58(), amount: '1', swapMode: 'ExactOut' }, 'NOT_SUPPORTED'],
    [{ inputMint: SOL, outputMint: MINT.toBase58(), amount: '1', swapMode: 'Sideways' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: MINT.toBase58(), amount: '1.5' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: MINT.toBase58(), amount: '1', slippageBps: '10001' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: MINT.toBase58(), amount: '1', slippageBps: '0.5' }, 'INVALID_REQUEST'],
    [{ inputMint: '1111111111111111111111111111111O', outputMint: SOL, amount: '1' }, 'INVALID_REQUEST'],
    [{ inputMint: `${SOL}1`, outputMint: MINT.toBase58(), amount: '1' }, 'INVALID_REQUEST'],
  ])('%j is refused with %s', (params, errorCode) => {
    expect(code(() => query(params))).toBe(errorCode);
  });

  it('never throws anything but a JupiterError on arbitrary query strings', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('inputMint', 'outputMint', 'amount', 'slippageBps', 'swapMode', 'x'), fc.string()), (params) => {
        try {
          query(params);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
        }
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('never throws anything but a JupiterError on arbitrary swap bodies', () => {
    fc.assert(
      fc.property(fc.anything(), (body) => {
        try {
          parseSwapRequest(body);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
        }
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('drops malformed price ids and caps the list', () => {
    expect(parsePriceIds(new URLSearchParams({ ids: `${SOL}, nope ,,${MINT.toBase58()}` })).map((k) => k.toBase58())).toEqual([SOL, MINT.toBase58()]);
    expect(() => parsePriceIds(new URLSearchParams({ ids: Array(51).fill(SOL).join(',') }))).toThrow(JupiterError);
  });
});

describe('swap route plans', () => {
  const A = Keypair.generate().publicKey.toBase58();
  const B = Keypair.generate().publicKey.toBase58();
  const POOL_A = Keypair.generate().publicKey.toBase58();
  const CURVE_B = Keypair.generate().publicKey.toBase58();
  const step = (ammKey: string, inputMint: string, outputMint: string, inAmount: string, outAmount: string) => ({ swapInfo: { ammKey, inputMint, outputMint, inAmount, outAmount }, percent: 100 });
  const body = (routePlan: unknown[], outAmount = '500') => ({
    userPublicKey: MINT.toBase58(),
    quoteResponse: { inputMint: A, outputMint: B, inAmount: '1000', outAmount, otherAmountThreshold: '490', swapMode: 'ExactIn', routePlan },
  });
  const code = (value: unknown) => {
    try {
      parseSwapRequest(value);
    } catch (error) {
      return (error as JupiterError).errorCode;
    }
    return 'accepted';
  };

  it('reads a two-step plan through SOL as two legs, each with the amounts the quote planned', () => {
    const request = parseSwapRequest(body([step(POOL_A, A, SOL, '1000', '77'), step(CURVE_B, SOL, B, '77', '500')]));
    expect(request.legs.map((leg) => [leg.ammKey.toBase58(), leg.inputMint.toBase58(), leg.outputMint.toBase58(), leg.inAmount, leg.outAmount])).toEqual([
      [POOL_A, A, SOL, 1000n, 77n],
      [CURVE_B, SOL, B, 77n, 500n],
    ]);
    expect(request.otherAmountThreshold).toBe(490n);
  });

  it.each([
    ['a step without its amounts', [{ swapInfo: { ammKey: POOL_A } }, step(CURVE_B, SOL, B, '77', '500')], 'INVALID_REQUEST'],
    ['a second step that spends other than the first yields', [step(POOL_A, A, SOL, '1000', '77'), step(CURVE_B, SOL, B, '78', '500')], 'INVALID_REQUEST'],
    ['a plan that starts elsewhere than the input', [step(POOL_A, B, SOL, '1000', '77'), step(CURVE_B, SOL, B, '77', '500')], 'INVALID_REQUEST'],
    ['a plan that ends short of the quoted output', [step(POOL_A, A, SOL, '1000', '77'), step(CURVE_B, SOL, B, '77', '499')], 'INVALID_REQUEST'],
    ['three steps', [step(POOL_A, A, SOL, '1000', '77'), step(CURVE_B, SOL, B, '77', '500'), step(CURVE_B, B, B, '500', '500')], 'NOT_SUPPORTED'],
  ])('refuses %s', (_, plan, errorCode) => {
    expect(code(body(plan))).toBe(errorCode);
  });
});

describe('quote arithmetic', () => {
  it('the threshold is the output less the slippage, rounded down', () => {
    expect(minimumOut(10_000n, 50)).toBe(9_950n);
    expect(minimumOut(999n, 1)).toBe(998n);
    expect(minimumOut(123n, 0)).toBe(123n);
    expect(minimumOut(123n, 10_000)).toBe(0n);
  });

  it('prints fractions as plain decimals', () => {
    expect(decimalText(1.2e-7)).toBe('0.00000012');
    expect(decimalText(0.25)).toBe('0.25');
    expect(decimalText(0)).toBe('0');
    expect(decimalText(Number.NaN)).toBe('0');
  });
});

/** anchor's borsh instruction coder decodes too, though its interface only declares encode. */
type Decoder = { decode(data: Buffer): { name: string; data: Record<string, any> } | null };

describe('exact-input instruction data', () => {
  it('buy_exact_sol_in decodes with the pump IDL', () => {
    const decoded = (getPumpProgram(new Connection('http://127.0.0.1:9')).coder.instruction as unknown as Decoder).decode(curveBuyExactSolInData(123n, 45n))!;
    expect(decoded.name).toBe('buyExactSolIn');
    expect(decoded.data.spendableSolIn.toString()).toBe('123');
    expect(decoded.data.minTokensOut.toString()).toBe('45');
    expect(decoded.data.trackVolume[0]).toBe(true);
  });

  it('buy_exact_quote_in decodes with the PumpSwap IDL', () => {
    const decoded = (OFFLINE_PUMP_AMM_PROGRAM.coder.instruction as unknown as Decoder).decode(poolBuyExactQuoteInData(7n, 3n))!;
    expect(decoded.name).toBe('buyExactQuoteIn');
    expect(decoded.data.spendableQuoteIn.toString()).toBe('7');
    expect(decoded.data.minBaseAmountOut.toString()).toBe('3');
  });
});

/** A curve some way along, in both the emulator's shape and the SDK's, from the localnet's genesis parameters. */
function curveAt(sold: bigint, creator: PublicKey): { emulated: BondingCurve; venue: CurveVenue } {
  const fresh: BondingCurve = {
    virtualTokenReserves: GENESIS_GLOBAL.initialVirtualTokenReserves,
    virtualQuoteReserves: GENESIS_GLOBAL.initialVirtualSolReserves,
    realTokenReserves: GENESIS_GLOBAL.initialRealTokenReserves,
    realQuoteReserves: 0n,
    tokenTotalSupply: GENESIS_GLOBAL.tokenTotalSupply,
    complete: false,
    creator,
    isMayhemMode: false,
    isCashbackCoin: false,
    quoteMint: PublicKey.default,
    creatorFeeBps: 0n,
    canEditCreatorFee: false,
    isHolderReward: false,
  };
  const emulated = sold === 0n ? fresh : afterBuy(fresh, sold, buyCost(fresh, sold));
  const data = encodeBondingCurve(emulated);
  return {
    emulated,
    venue: {
      kind: 'curve',
      mint: mintInfo(MINT, GENESIS_GLOBAL.tokenTotalSupply, 6, TOKEN_2022_PROGRAM_ID),
      address: PublicKey.default,
      info: info(data),
      curve: PUMP_SDK.decodeBondingCurve(info(data)),
      global: PUMP_SDK.decodeGlobal(info(encodeGlobal(GENESIS_GLOBAL))),
      feeConfig: PUMP_SDK.decodeFeeConfig(info(encodeFeeConfig(GENESIS_FEE_CONFIG))),
    },
  };
}

describe('curve fills equal what the emulated pump program executes', () => {
  const sold = fc.bigInt({ min: 0n, max: GENESIS_GLOBAL.initialRealTokenReserves - 1n });
  const creator = fc.boolean().map((has) => (has ? Keypair.generate().publicKey : PublicKey.default));
  const rates = (curve: BondingCurve) => curveFeeRates(GENESIS_GLOBAL, GENESIS_FEE_CONFIG, curve, feeSupply(curve, GENESIS_GLOBAL.tokenTotalSupply));

  it('buy_exact_sol_in delivers the quoted tokens and spends the budget to within 4 lamports', () => {
    fc.assert(
      fc.property(sold, creator, fc.bigInt({ min: 1n, max: 100_000_000_000n }), (s, c, spendable) => {
        const { emulated, venue } = curveAt(s, c);
        let fill;
        try {
          fill = fillExactIn(venue, NATIVE_MINT, spendable);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
          const tokens = buyExactSolInTokens(emulated, rates(emulated), spendable);
          expect(tokens === 0n || tokens === emulated.realTokenReserves).toBe(true);
          return;
        }
        const tokens = buyExactSolInTokens(emulated, rates(emulated), spendable);
        expect(fill.outAmount).toBe(tokens);
        const cost = buyCost(emulated, tokens);
        const fees = tradeFees(cost, rates(emulated), chargesCreatorFee(emulated));
        const spent = cost + fees.protocolFee + fees.creatorFee;
        expect(fill.feeAmount).toBe(fees.protocolFee + fees.creatorFee);
        expect(spent).toBeLessThanOrEqual(spendable);
        expect(spendable - spent).toBeLessThanOrEqual(4n);
      }),
      { seed: 11, numRuns: 300 },
    );
  });

  it('sell pays out the quoted SOL', () => {
    fc.assert(
      fc.property(sold.filter((s) => s > 0n), creator, fc.double({ min: 0, max: 1, noNaN: true }), (s, c, share) => {
        const { emulated, venue } = curveAt(s, c);
        const amount = BigInt(Math.floor(Number(s) * share));
        fc.pre(amount > 0n);
        const gross = sellProceeds(emulated, amount);
        const fees = tradeFees(gross, rates(emulated), chargesCreatorFee(emulated));
        const proceeds = gross - fees.protocolFee - fees.creatorFee;
        let fill;
        try {
          fill = fillExactIn(venue, MINT, amount);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
          expect(proceeds).toBeLessThanOrEqual(0n);
          return;
        }
        expect(fill.outAmount).toBe(proceeds);
      }),
      { seed: 12, numRuns: 150 },
    );
  });
});

function poolWith(baseReserve: bigint, quoteReserve: bigint): PoolVenue {
  const creator = Keypair.generate().publicKey;
  const { address, pool } = newPool(
    { index: 0, baseAmountIn: baseReserve, quoteAmountIn: quoteReserve, coinCreator: PublicKey.default, isMayhemMode: false, isCashbackCoin: false, creatorFeeBps: 0n, canEditCreatorFee: false },
    creator,
    MINT,
    NATIVE_MINT,
    TOKEN_PROGRAM_ID,
    TOKEN_PROGRAM_ID,
  );
  const data = encodePool(pool);
  return {
    kind: 'pool',
    address,
    info: info(data),
    pool: PUMP_AMM_SDK.decodePool(info(data)),
    globalConfig: PUMP_AMM_SDK.decodeGlobalConfig(info(encodeGlobalConfig(GENESIS_GLOBAL_CONFIG))),
    feeConfig: PUMP_AMM_SDK.decodeFeeConfig(info(encodeAmmFeeConfig(GENESIS_AMM_FEE_CONFIG))),
    base: mintInfo(MINT, baseReserve * 2n, 6, TOKEN_PROGRAM_ID),
    quote: mintInfo(NATIVE_MINT, 0n, 9, TOKEN_PROGRAM_ID),
    baseReserve: new BN(baseReserve.toString()),
    quoteReserve: new BN(quoteReserve.toString()),
  };
}

describe('pool fills equal what the emulated PumpSwap program executes', () => {
  const reserve = fc.bigInt({ min: 1_000_000n, max: 10n ** 16n });
  const feesOf = (venue: PoolVenue, base: bigint, quote: bigint) =>
    poolTradeFees({
      schedule: { flatFees: GENESIS_AMM_FEE_CONFIG.flatFees, feeTiers: GENESIS_AMM_FEE_CONFIG.feeTiers, stableFeeTiers: GENESIS_AMM_FEE_CONFIG.stableFeeTiers, exoticFlatFees: GENESIS_AMM_FEE_CONFIG.exoticFlatFees },
      globalFees: { lpFeeBps: 0n, protocolFeeBps: 0n, creatorFeeBps: 0n },
      pumpPool: isPumpPool(venue.pool.baseMint, venue.pool.creator),
      quoteMint: NATIVE_MINT,
      baseMintSupply: base * 2n,
      baseReserve: base,
      quoteReserve: quote,
      isMayhemMode: false,
      poolCreatorFeeBps: 0n,
      creatorFeeConfigurable: GENESIS_GLOBAL_CONFIG.creatorFeeConfigurable,
    });

  it('buy_exact_quote_in delivers the quoted base', () => {
    fc.assert(
      fc.property(reserve, reserve, fc.bigInt({ min: 1n, max: 10n ** 14n }), (base, quote, spendable) => {
        const venue = poolWith(base, quote);
        const executed = buyExactQuoteIn(spendable, { base, quote, virtualQuote: 0n }, feesOf(venue, base, quote), false);
        let fill;
        try {
          fill = fillExactIn(venue, NATIVE_MINT, spendable);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
          expect(!executed.ok || executed.value.baseOut >= base).toBe(true);
          return;
        }
        expect(executed.ok && executed.value.baseOut).toBe(fill.outAmount);
        expect(executed.ok && executed.value.userQuoteIn - executed.value.quoteIn).toBe(fill.feeAmount);
      }),
      { seed: 13, numRuns: 300 },
    );
  });

  it('sell pays out the quoted quote', () => {
    fc.assert(
      fc.property(reserve, reserve, fc.bigInt({ min: 1n, max: 10n ** 16n }), (base, quote, baseIn) => {
        const venue = poolWith(base, quote);
        const executed = sellExactBaseIn(baseIn, { base, quote, virtualQuote: 0n }, feesOf(venue, base, quote), false);
        let fill;
        try {
          fill = fillExactIn(venue, MINT, baseIn);
        } catch (error) {
          expect(error).toBeInstanceOf(JupiterError);
          expect(!executed.ok || executed.value.userQuoteOut === 0n).toBe(true);
          return;
        }
        expect(executed.ok && executed.value.userQuoteOut).toBe(fill.outAmount);
      }),
      { seed: 14, numRuns: 300 },
    );
  });
});
