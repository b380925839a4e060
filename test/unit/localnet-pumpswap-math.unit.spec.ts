import BN from 'bn.js';
import fc from 'fast-check';
import { Keypair, PublicKey } from '@solana/web3.js';
import { NATIVE_MINT, RawMint } from '@solana/spl-token';
import { GlobalConfig as SdkGlobalConfig, PUMP_AMM_SDK, buyBaseInput, buyQuoteInput, computeFeesBps, sellBaseInput } from '@pump-fun/pump-swap-sdk';
import { Fees, buyExactBaseOut, buyExactQuoteIn, sellExactBaseIn, tradeFees } from '../../apps/localnet/src/programs/pumpSwap/math';
import { GENESIS_AMM_FEE_CONFIG } from '../../apps/localnet/src/programs/pumpFees/genesis';
import { decodeFeeConfig, encodeFeeConfig } from '../../apps/localnet/src/programs/pumpFees/state';
import { pumpPoolAuthority } from '../../apps/localnet/src/programs/pumpSwap/state';

// Pool math of the PumpSwap emulator against the swap SDK's own quoting functions: equal to the smallest unit.

const baseMint = Keypair.generate().publicKey;
const wallet = Keypair.generate().publicKey;
const numRuns = 2_000;

const sdkGlobalConfig = (fees: Fees): SdkGlobalConfig =>
  ({
    lpFeeBasisPoints: new BN(fees.lpFeeBps.toString()),
    protocolFeeBasisPoints: new BN(fees.protocolFeeBps.toString()),
    coinCreatorFeeBasisPoints: new BN(fees.creatorFeeBps.toString()),
    creatorFeeConfigurable: false,
  }) as SdkGlobalConfig;

const mintWithSupply = (supply: bigint) => ({ supply }) as RawMint;
const bn = (n: bigint) => new BN(n.toString());

const feesArb = fc.record({
  lpFeeBps: fc.bigInt(0n, 300n),
  protocolFeeBps: fc.bigInt(0n, 300n),
  creatorFeeBps: fc.bigInt(0n, 300n),
});
const poolArb = fc.record({
  base: fc.bigInt(1_000n, 10n ** 18n),
  quote: fc.bigInt(1_000n, 10n ** 16n),
  virtualQuote: fc.oneof(fc.constant(0n), fc.bigInt(1n, 10n ** 12n)),
  fees: feesArb,
  hasCoinCreator: fc.boolean(),
});

const sdkArgs = (p: fc.RecordValue<{ base: bigint; quote: bigint; virtualQuote: bigint; fees: Fees; hasCoinCreator: boolean }>) => ({
  slippage: 0,
  baseReserve: bn(p.base),
  quoteReserve: bn(p.quote),
  virtualQuoteReserves: bn(p.virtualQuote),
  globalConfig: sdkGlobalConfig(p.fees),
  baseMintAccount: mintWithSupply(10n ** 15n),
  baseMint,
  coinCreator: p.hasCoinCreator ? wallet : PublicKey.default,
  creator: wallet,
  feeConfig: null,
});

describe('PumpSwap emulator pool math equals the swap SDK', () => {
  it('buy by base out charges what buyBaseInput quotes', () => {
    fc.assert(
      fc.property(poolArb, fc.double({ min: 0, max: 0.999, noNaN: true }), (p, fraction) => {
        const base = BigInt(Math.floor(Number(p.base - 1n) * fraction)) + 1n;
        fc.pre(base < p.base);
        const sdk = buyBaseInput({ ...sdkArgs(p), base: bn(base) });
        const ours = buyExactBaseOut(base, p, p.fees, p.hasCoinCreator);
        if (!ours.ok) throw new Error(ours.error);
        expect(ours.value.quoteIn.toString()).toBe(sdk.internalQuoteAmount.toString());
        expect(ours.value.userQuoteIn.toString()).toBe(sdk.uiQuote.toString());
      }),
      { numRuns },
    );
  });

  it('buy by quote in yields the base buyQuoteInput quotes, and buying that base costs no more than the quote', () => {
    fc.assert(
      fc.property(poolArb, fc.bigInt(10_000n, 10n ** 15n), (p, quote) => {
        const sdk = buyQuoteInput({ ...sdkArgs(p), quote: bn(quote) });
        fc.pre(sdk.base.gtn(0) && sdk.base.lt(bn(p.base)));
        const ours = buyExactQuoteIn(quote, p, p.fees, p.hasCoinCreator);
        if (!ours.ok) throw new Error(ours.error);
        expect(ours.value.baseOut.toString()).toBe(sdk.base.toString());
        expect(ours.value.quoteIn.toString()).toBe(sdk.internalQuoteWithoutFees.toString());
        // The SDK's buyQuoteInput builds `buy(base, maxQuote = quote)`: the program must accept it.
        const charged = buyExactBaseOut(ours.value.baseOut, p, p.fees, p.hasCoinCreator);
        if (!charged.ok) throw new Error(charged.error);
        expect(charged.value.userQuoteIn <= quote).toBe(true);
      }),
      { numRuns },
    );
  });

  it('sell by base in pays what sellBaseInput quotes', () => {
    fc.assert(
      fc.property(poolArb, fc.bigInt(1n, 10n ** 18n), (p, base) => {
        let sdk: ReturnType<typeof sellBaseInput>;
        try {
          sdk = sellBaseInput({ ...sdkArgs(p), base: bn(base) });
        } catch {
          const ours = sellExactBaseIn(base, p, p.fees, p.hasCoinCreator);
          expect(ours.ok).toBe(false);
          return;
        }
        const ours = sellExactBaseIn(base, p, p.fees, p.hasCoinCreator);
        if (!ours.ok) throw new Error(ours.error);
        expect(ours.value.quoteOut.toString()).toBe(sdk.internalQuoteAmountOut.toString());
        expect(ours.value.userQuoteOut.toString()).toBe(sdk.uiQuote.toString());
      }),
      { numRuns },
    );
  });

  it('prices with the fee tier the SDK reads from the genesis FeeConfig bytes', () => {
    const data = encodeFeeConfig(GENESIS_AMM_FEE_CONFIG);
    const sdkFeeConfig = PUMP_AMM_SDK.decodeFeeConfig({ data, owner: PublicKey.default, lamports: 0, executable: false });
    const schedule = decodeFeeConfig(data);
    expect(schedule).toEqual(GENESIS_AMM_FEE_CONFIG);
    const globalFees: Fees = { lpFeeBps: 20n, protocolFeeBps: 5n, creatorFeeBps: 5n };
    const usdc = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    fc.assert(
      fc.property(
        fc.bigInt(1n, 10n ** 15n),
        fc.bigInt(1n, 10n ** 14n),
        fc.bigInt(1n, 10n ** 16n),
        fc.boolean(),
        fc.constantFrom(NATIVE_MINT, usdc, Keypair.generate().publicKey),
        (baseReserve, quoteReserve, supply, pumpPool, quoteMint) => {
          const creator = pumpPool ? pumpPoolAuthority(baseMint) : wallet;
          const sdk = computeFeesBps({
            globalConfig: sdkGlobalConfig(globalFees),
            feeConfig: sdkFeeConfig,
            creator,
            baseMintSupply: bn(supply),
            baseMint,
            baseReserve: bn(baseReserve),
            quoteReserve: bn(quoteReserve),
            quoteMint,
          });
          const ours = tradeFees({
            schedule,
            globalFees,
            pumpPool,
            quoteMint,
            baseMintSupply: supply,
            baseReserve,
            quoteReserve,
            isMayhemMode: false,
            poolCreatorFeeBps: 0n,
            creatorFeeConfigurable: false,
          });
          expect([ours.lpFeeBps, ours.protocolFeeBps, ours.creatorFeeBps].join('/')).toBe([sdk.lpFeeBps, sdk.protocolFeeBps, sdk.creatorFeeBps].join('/'));
        },
      ),
      { numRuns },
    );
  });
});
