import BN from 'bn.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import { BONDING_CURVE_SIZE as SDK_BONDING_CURVE_SIZE, GLOBAL_SIZE as SDK_GLOBAL_SIZE, PUMP_SDK } from '@pump-fun/pump-sdk';
import { encodeEvent, encodeInstructionData, decodeInstructionArgs } from '../../apps/localnet/src/programs/pump/codec';
import { GENESIS_FEE_CONFIG, GENESIS_GLOBAL } from '../../apps/localnet/src/programs/pump/genesis';
import {
  BONDING_CURVE_SIZE,
  BondingCurve,
  decodeBondingCurve,
  decodeFeeConfig,
  decodeGlobal,
  encodeBondingCurve,
  encodeFeeConfig,
  encodeGlobal,
  FEE_CONFIG_CURRENT_SIZE,
  FEE_CONFIG_INITIALIZE_SIZE,
  GLOBAL_SIZE,
} from '../../apps/localnet/src/programs/pump/state';

/** The emulator writes accounts and events the SDK must read back field for field. */

const account = (data: Buffer) => ({ data, lamports: 1, owner: PublicKey.default, executable: false });
/** BN, bigint and PublicKey as strings, so the SDK's values and the emulator's compare by value. */
const asStrings = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
      const raw = this[key];
      if (raw instanceof PublicKey) return raw.toBase58();
      if (BN.isBN(raw) || typeof raw === 'bigint') return raw.toString();
      return v;
    }),
  );

const curve: BondingCurve = {
  virtualTokenReserves: 1_000_000_000_000_000n,
  virtualQuoteReserves: 31_000_000_000n,
  realTokenReserves: 720_000_000_000_000n,
  realQuoteReserves: 1_000_000_000n,
  tokenTotalSupply: 1_000_000_000_000_000n,
  complete: false,
  creator: Keypair.generate().publicKey,
  isMayhemMode: true,
  isCashbackCoin: false,
  quoteMint: PublicKey.default,
  creatorFeeBps: 0n,
  canEditCreatorFee: false,
  isHolderReward: true,
};

describe('pump account layouts', () => {
  test('sizes are the SDK constants: Global at its full size, new curves at the extended size', () => {
    expect(GLOBAL_SIZE).toBe(SDK_GLOBAL_SIZE);
    expect(BONDING_CURVE_SIZE).toBeGreaterThan(SDK_BONDING_CURVE_SIZE);
    expect(encodeGlobal(GENESIS_GLOBAL)).toHaveLength(GLOBAL_SIZE);
  });

  test('the genesis Global decodes in the SDK to the same values and back in the emulator', () => {
    const data = encodeGlobal(GENESIS_GLOBAL);
    expect(asStrings(PUMP_SDK.decodeGlobal(account(data)))).toEqual(asStrings(GENESIS_GLOBAL));
    expect(decodeGlobal(data)).toEqual(GENESIS_GLOBAL);
  });

  test('a bonding curve round-trips through the SDK decoder', () => {
    const data = encodeBondingCurve(curve);
    expect(data).toHaveLength(BONDING_CURVE_SIZE);
    expect(asStrings(PUMP_SDK.decodeBondingCurve(account(data)))).toEqual(asStrings(curve));
    expect(decodeBondingCurve(data)).toEqual(curve);
  });

  test('a curve written before the trailing fields existed reads them as defaults', () => {
    const short = encodeBondingCurve(curve).subarray(0, 8 + 5 * 8 + 1 + 32);
    expect(decodeBondingCurve(short)).toEqual({ ...curve, isMayhemMode: false, isHolderReward: false, quoteMint: PublicKey.default });
  });

  test('FeeConfig decodes identically in the SDK, at the current and at the initial layout', () => {
    const data = encodeFeeConfig(GENESIS_FEE_CONFIG);
    expect(data).toHaveLength(FEE_CONFIG_CURRENT_SIZE);
    expect(asStrings(PUMP_SDK.decodeFeeConfig(account(data)))).toEqual(asStrings(GENESIS_FEE_CONFIG));
    expect(decodeFeeConfig(data)).toEqual(GENESIS_FEE_CONFIG);

    const initial = encodeFeeConfig({ ...GENESIS_FEE_CONFIG, stableFeeTiers: [] }, FEE_CONFIG_INITIALIZE_SIZE);
    expect(asStrings(decodeFeeConfig(initial))).toEqual(asStrings(PUMP_SDK.decodeFeeConfig(account(initial))));
    expect(decodeFeeConfig(initial).exoticFlatFees).toEqual({ lpFeeBps: 0n, protocolFeeBps: 0n, creatorFeeBps: 0n });
  });

  test('Global and FeeConfig are decoded once per content: the same bytes share one frozen answer, changed bytes are read anew', () => {
    const data = encodeFeeConfig(GENESIS_FEE_CONFIG);
    const first = decodeFeeConfig(data);
    // Equal bytes in another buffer, as each trade reads the account afresh.
    expect(decodeFeeConfig(Buffer.from(data))).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.feeTiers) && Object.isFrozen(first.feeTiers[0]!.fees)).toBe(true);
    expect(() => {
      (first.flatFees as { lpFeeBps: bigint }).lpFeeBps = 1n;
    }).toThrow(TypeError);

    // Rewritten in place, as an admin instruction would: the memo must not answer from what it kept.
    const changed = { ...GENESIS_FEE_CONFIG, flatFees: { ...GENESIS_FEE_CONFIG.flatFees, protocolFeeBps: 77n } };
    data.set(encodeFeeConfig(changed));
    expect(decodeFeeConfig(data)).toEqual(changed);
    expect(decodeFeeConfig(data)).not.toBe(first);

    const global = encodeGlobal(GENESIS_GLOBAL);
    const decoded = decodeGlobal(global);
    expect(decodeGlobal(Buffer.from(global))).toBe(decoded);
    global.set(encodeGlobal({ ...GENESIS_GLOBAL, feeBasisPoints: 3n }));
    expect(decodeGlobal(global).feeBasisPoints).toBe(3n);
    expect(decoded.feeBasisPoints).toBe(GENESIS_GLOBAL.feeBasisPoints);
  });
});

describe('pump events and instruction data', () => {
  test('TradeEvent decodes in the SDK field for field', () => {
    const fields = {
      mint: Keypair.generate().publicKey,
      solAmount: 123n,
      tokenAmount: 456n,
      isBuy: true,
      user: Keypair.generate().publicKey,
      timestamp: 1_700_000_000n,
      virtualSolReserves: 30_000_000_123n,
      virtualTokenReserves: 1_072_999_999_999_544n,
      realSolReserves: 123n,
      realTokenReserves: 793_099_999_999_544n,
      feeRecipient: Keypair.generate().publicKey,
      feeBasisPoints: 95n,
      fee: 2n,
      creator: Keypair.generate().publicKey,
      creatorFeeBasisPoints: 30n,
      creatorFee: 1n,
      trackVolume: true,
      totalUnclaimedTokens: 0n,
      totalClaimedTokens: 0n,
      currentSolVolume: 123n,
      lastUpdateTimestamp: 1_700_000_000n,
      ixName: 'buy',
      mayhemMode: false,
      cashbackFeeBasisPoints: 0n,
      cashback: 0n,
      buybackFeeBasisPoints: 0n,
      buybackFee: 0n,
      shareholders: [{ address: Keypair.generate().publicKey, shareBps: 10_000 }],
      quoteMint: PublicKey.default,
      quoteAmount: 123n,
      virtualQuoteReserves: 30_000_000_123n,
      realQuoteReserves: 123n,
      holderRewardsBps: 0n,
      holderRewards: 0n,
    };
    const bytes = encodeEvent('TradeEvent', fields);
    expect(asStrings(PUMP_SDK.decodeTradeEventBc(bytes.subarray(8)))).toEqual(asStrings(fields));
  });

  test('create_v2 args read back from the SDK builder, and trailing options read as unset when left off', async () => {
    const mint = Keypair.generate().publicKey;
    const creator = Keypair.generate().publicKey;
    const ix = await PUMP_SDK.createV2Instruction({ mint, name: 'Name', symbol: 'SYM', uri: 'https://x', creator, user: creator, mayhemMode: true });
    expect(decodeInstructionArgs('create_v2', ix.data.subarray(8))).toEqual({
      name: 'Name',
      symbol: 'SYM',
      uri: 'https://x',
      creator,
      isMayhemMode: true,
      isCashbackEnabled: [false],
      creatorFeeBps: [0n],
      isHolderReward: [false],
    });
    const legacy = encodeInstructionData('buy', { amount: 5n, maxSolCost: 9n, trackVolume: [true] }).subarray(8, 8 + 16);
    expect(decodeInstructionArgs('buy', legacy)).toEqual({ amount: 5n, maxSolCost: 9n, trackVolume: [false] });
    expect(decodeInstructionArgs('buy', legacy.subarray(0, 10))).toBeNull();
  });
});
