import fc from 'fast-check';
import BN from 'bn.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import { NATIVE_MINT } from '@solana/spl-token';
import {
  computeFeesBps,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
  getFee,
  getSellSolAmountFromTokenAmount,
  PUMP_SDK,
} from '@pump-fun/pump-sdk';
import { GENESIS_FEE_CONFIG, GENESIS_GLOBAL } from '../../apps/localnet/src/programs/pump/genesis';
import {
  bigMin,
  buyCost,
  buyExactSolInTokens,
  buyTokensForSolQuote,
  chargesCreatorFee,
  curveFeeRates,
  feeSupply,
  ONE_BILLION_SUPPLY,
  sellProceeds,
  tradeFees,
} from '../../apps/localnet/src/programs/pump/math';
import { BondingCurve, encodeBondingCurve, encodeFeeConfig, encodeGlobal, FeeConfig, FeeTier, Global } from '../../apps/localnet/src/programs/pump/state';

/**
 * The emulator's curve and fee arithmetic against the SDK's own helpers, to the lamport and the token unit,
 * over random curves, fee schedules and sizes. The SDK's inputs are the emulator's accounts decoded by the
 * SDK, so the layouts are exercised on every run too.
 */

const RUNS = { numRuns: Number(process.env.FUZZ_RUNS ?? 400), seed: process.env.FUZZ_SEED === 'random' ? undefined : Number(process.env.FUZZ_SEED ?? 20261122) };
const SOL = 1_000_000_000n;
const account = (data: Buffer) => ({ data, lamports: 1, owner: PublicKey.default, executable: false });
const bn = (v: bigint) => new BN(v.toString());
const big = (v: BN) => BigInt(v.toString());

const bps = fc.bigInt({ min: 0n, max: 1_000n });
const fees = fc.record({ lpFeeBps: bps, protocolFeeBps: bps, creatorFeeBps: bps });
const randomTiers = fc
  .array(fc.record({ marketCapLamportsThreshold: fc.bigInt({ min: 0n, max: 1_000n * SOL }), fees }), { minLength: 1, maxLength: 6 })
  .map((tiers): FeeTier[] => [...tiers].sort((a, b) => (a.marketCapLamportsThreshold < b.marketCapLamportsThreshold ? -1 : 1)));
const feeConfigArb: fc.Arbitrary<FeeConfig | null> = fc.oneof(
  fc.constant(GENESIS_FEE_CONFIG),
  randomTiers.map((feeTiers) => ({ ...GENESIS_FEE_CONFIG, feeTiers })),
  fc.constant(null),
);
const globalArb: fc.Arbitrary<Global> = fc
  .record({ creatorFeeConfigurable: fc.boolean(), feeBasisPoints: bps, creatorFeeBasisPoints: bps })
  .map((overrides) => ({ ...GENESIS_GLOBAL, ...overrides }));

/** Reachable curves: anywhere between the genesis reserves and complete, with or without a creator. */
const curveArb: fc.Arbitrary<{ curve: BondingCurve; mintSupply: bigint }> = fc
  .record({
    sold: fc.bigInt({ min: 0n, max: GENESIS_GLOBAL.initialRealTokenReserves - 1n }),
    extraSol: fc.bigInt({ min: 0n, max: 90n * SOL }),
    creator: fc.oneof(fc.constant(PublicKey.default), fc.constant(Keypair.generate().publicKey)),
    isMayhemMode: fc.boolean(),
    creatorFeeBps: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 300n })),
    extraSupply: fc.bigInt({ min: 0n, max: ONE_BILLION_SUPPLY }),
  })
  .map(({ sold, extraSol, creator, isMayhemMode, creatorFeeBps, extraSupply }) => ({
    curve: {
      virtualTokenReserves: GENESIS_GLOBAL.initialVirtualTokenReserves - sold,
      virtualQuoteReserves: GENESIS_GLOBAL.initialVirtualSolReserves + extraSol,
      realTokenReserves: GENESIS_GLOBAL.initialRealTokenReserves - sold,
      realQuoteReserves: extraSol,
      tokenTotalSupply: GENESIS_GLOBAL.tokenTotalSupply,
      complete: false,
      creator,
      isMayhemMode,
      isCashbackCoin: false,
      quoteMint: PublicKey.default,
      creatorFeeBps,
      canEditCreatorFee: false,
      isHolderReward: false,
    },
    mintSupply: isMayhemMode ? ONE_BILLION_SUPPLY + extraSupply : ONE_BILLION_SUPPLY,
  }));

/** One market: the emulator's values and the same accounts as the SDK decodes them. */
const marketArb = fc.record({ global: globalArb, feeConfig: feeConfigArb, state: curveArb }).map(({ global, feeConfig, state }) => ({
  global,
  feeConfig,
  ...state,
  rates: curveFeeRates(global, feeConfig, state.curve, feeSupply(state.curve, state.mintSupply)),
  sdk: {
    global: PUMP_SDK.decodeGlobal(account(encodeGlobal(global))),
    feeConfig: feeConfig && PUMP_SDK.decodeFeeConfig(account(encodeFeeConfig(feeConfig))),
    bondingCurve: PUMP_SDK.decodeBondingCurve(account(encodeBondingCurve(state.curve))),
    mintSupply: bn(state.mintSupply),
  },
}));

describe('pump curve math equals the SDK to the smallest unit', () => {
  test('fee rates: the tier the market cap selects, and a curve\'s own creator rate while Global allows it', () => {
    fc.assert(
      fc.property(marketArb, (m) => {
        const sdk = computeFeesBps({
          global: m.sdk.global,
          feeConfig: m.sdk.feeConfig,
          mintSupply: bn(feeSupply(m.curve, m.mintSupply)),
          virtualQuoteReserves: m.sdk.bondingCurve.virtualQuoteReserves,
          virtualTokenReserves: m.sdk.bondingCurve.virtualTokenReserves,
          quoteMint: m.sdk.bondingCurve.quoteMint,
          creatorFeeBps: m.sdk.bondingCurve.creatorFeeBps,
        });
        expect({ protocol: big(sdk.protocolFeeBps), creator: big(sdk.creatorFeeBps) }).toEqual({ protocol: m.rates.protocolFeeBps, creator: m.rates.creatorFeeBps });
      }),
      RUNS,
    );
  });

  test('buy by token amount: curve cost plus protocol and creator fee, the amount capped at the real reserves', () => {
    fc.assert(
      fc.property(marketArb, fc.bigInt({ min: 1n, max: 900_000_000_000_000n }), (m, amount) => {
        const tokens = bigMin(amount, m.curve.realTokenReserves);
        const cost = buyCost(m.curve, tokens);
        const { protocolFee, creatorFee } = tradeFees(cost, m.rates, chargesCreatorFee(m.curve));
        const sdkTotal = getBuySolAmountFromTokenAmount({ ...m.sdk, amount: bn(amount), quoteMint: NATIVE_MINT });
        const sdkFee = getFee({ ...m.sdk, amount: bn(cost), isNewBondingCurve: false });
        expect(big(sdkTotal)).toBe(cost + protocolFee + creatorFee);
        expect(big(sdkFee)).toBe(protocolFee + creatorFee);
      }),
      RUNS,
    );
  });

  test('sell: curve proceeds less protocol and creator fee', () => {
    fc.assert(
      fc.property(marketArb, fc.bigInt({ min: 1n, max: ONE_BILLION_SUPPLY }), (m, amount) => {
        const proceeds = sellProceeds(m.curve, amount);
        const { protocolFee, creatorFee } = tradeFees(proceeds, m.rates, chargesCreatorFee(m.curve));
        const sdk = getSellSolAmountFromTokenAmount({ ...m.sdk, amount: bn(amount) });
        expect(big(sdk)).toBe(proceeds - protocolFee - creatorFee);
        expect(big(getFee({ ...m.sdk, amount: bn(proceeds), isNewBondingCurve: false }))).toBe(protocolFee + creatorFee);
      }),
      RUNS,
    );
  });

  test('buy by SOL: the token quote for a lamport budget', () => {
    fc.assert(
      fc.property(marketArb, fc.bigInt({ min: 1n, max: 200n * SOL }), (m, spend) => {
        // The SDK prices this quote's tier with the supply it is given, so it gets the supply the program prices with.
        const sdk = getBuyTokenAmountFromSolAmount({ ...m.sdk, mintSupply: bn(feeSupply(m.curve, m.mintSupply)), amount: bn(spend), quoteMint: NATIVE_MINT });
        expect(big(sdk)).toBe(buyTokensForSolQuote(m.curve, m.rates, spend));
      }),
      RUNS,
    );
  });

  test('buy_exact_sol_in never charges more than the budget and never gives more than the SDK quotes', () => {
    fc.assert(
      fc.property(marketArb, fc.bigInt({ min: 1n, max: 200n * SOL }), (m, spend) => {
        const tokens = buyExactSolInTokens(m.curve, m.rates, spend);
        const quote = big(getBuyTokenAmountFromSolAmount({ ...m.sdk, mintSupply: bn(feeSupply(m.curve, m.mintSupply)), amount: bn(spend), quoteMint: NATIVE_MINT }));
        expect(tokens).toBeLessThanOrEqual(quote);
        if (tokens === 0n) return;
        const cost = buyCost(m.curve, tokens);
        const { protocolFee, creatorFee } = tradeFees(cost, m.rates, chargesCreatorFee(m.curve));
        expect(cost + protocolFee + creatorFee).toBeLessThanOrEqual(spend);
      }),
      RUNS,
    );
  });
});
