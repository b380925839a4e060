import { Keypair, LAMPORTS_PER_SOL, PublicKey, SendTransactionError, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import BN from 'bn.js';
import { creatorVaultPda, feeSharingConfigPda, OnlinePumpSdk, PUMP_SDK } from '@pump-fun/pump-sdk';
import { pumpProgram } from '../../apps/localnet/src/programs/pump';
import { pumpSwapProgram } from '../../apps/localnet/src/programs/pumpSwap';
import { pumpFeesProgram } from '../../apps/localnet/src/programs/pumpFees';
import { eventDiscriminator } from '../../apps/localnet/src/programs/pump/codec';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * Quote-aware fee sharing on a SOL coin: pump-fees' update_fee_shares_v2 first pays what the creator vault holds
 * to the shareholders being replaced (through pump's distribute_creator_fees_v2), then records the new split,
 * which distribute_creator_fees_v2 pays from then on.
 */

const TX_FEE = 5000n;

describe('pump distribute_creator_fees_v2 on the localnet, via pump-fees update_fee_shares_v2', () => {
  let t: LocalnetClient;
  let sdk: OnlinePumpSdk;
  let creator: Keypair;
  let trader: Keypair;
  let partnerA: PublicKey;
  let partnerB: PublicKey;
  const coin = Keypair.generate();
  const mint = coin.publicKey;
  const sharingConfig = feeSharingConfigPda(mint);
  const vault = creatorVaultPda(sharingConfig);

  beforeAll(async () => {
    t = await localnet({ programs: [pumpProgram, pumpSwapProgram, pumpFeesProgram] });
    sdk = new OnlinePumpSdk(t.connection);
    // A shareholder must be able to hold what it is paid, so the partners are funded system accounts.
    [creator, trader, partnerA, partnerB] = await Promise.all([t.funded(10), t.funded(50), t.funded(1).then((k) => k.publicKey), t.funded(1).then((k) => k.publicKey)]);
    await send([await PUMP_SDK.createV2Instruction({ mint, name: 'Shared V2', symbol: 'SHR2', uri: 'https://example.com/shr2.json', creator: creator.publicKey, user: creator.publicKey, mayhemMode: false })], [creator, coin]);
    await send([await PUMP_SDK.createFeeSharingConfig({ creator: creator.publicKey, mint, pool: null })], [creator]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  const lamports = (key: PublicKey) => t.connection.getBalance(key, 'confirmed').then(BigInt);
  const pending = async () => BigInt((await sdk.getCreatorVaultBalance(sharingConfig)).toString());
  const distributeEvents = async (signature: string) => {
    const tx = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    return (tx?.meta?.logMessages ?? [])
      .filter((line) => line.startsWith('Program data: '))
      .map((line) => Buffer.from(line.slice('Program data: '.length), 'base64'))
      .filter((data) => data.subarray(0, 8).equals(eventDiscriminator('DistributeCreatorFeesEvent')))
      .map((data) => PUMP_SDK.decodeDistributeCreatorFeesEvent(data.subarray(8)));
  };
  /** A trader's buy on the coin; its creator fee accrues in the SharingConfig's creator vault. */
  async function buy(): Promise<void> {
    const global = await sdk.fetchGlobal();
    const state = await sdk.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    await send(
      await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount: new BN('30000000000000'), solAmount: new BN(2 * LAMPORTS_PER_SOL), slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID }),
      [trader],
    );
  }
  const fetchSharingConfig = async () => PUMP_SDK.decodeSharingConfig((await t.connection.getAccountInfo(sharingConfig, 'confirmed'))!);

  test('update_fee_shares_v2 pays the pending creator fees to the old shareholders, then records the new split', async () => {
    await buy();
    const accrued = await pending();
    expect(accrued).toBeGreaterThan(0n);
    const vaultRent = BigInt(await t.connection.getMinimumBalanceForRentExemption(0, 'confirmed'));
    const before = { creator: await lamports(creator.publicKey), a: await lamports(partnerA), b: await lamports(partnerB) };

    const update = await PUMP_SDK.updateFeeSharesV2({
      authority: creator.publicKey,
      mint,
      currentShareholders: [creator.publicKey],
      newShareholders: [
        { address: partnerA, shareBps: 6_000 },
        { address: partnerB, shareBps: 4_000 },
      ],
      quoteMint: NATIVE_MINT,
      quoteTokenProgram: TOKEN_PROGRAM_ID,
    });
    const signature = await send([update], [creator]);

    // The creator was the sole shareholder before the update: it receives the whole vault, the new ones nothing.
    expect((await lamports(creator.publicKey)) - before.creator).toBe(accrued - TX_FEE);
    expect(await lamports(partnerA)).toBe(before.a);
    expect(await lamports(partnerB)).toBe(before.b);
    expect(await lamports(vault)).toBe(vaultRent);
    const [event] = await distributeEvents(signature);
    expect(event.distributed.toString()).toBe(accrued.toString());
    expect(event.mint.equals(mint)).toBe(true);
    expect(event.sharingConfig.equals(sharingConfig)).toBe(true);
    expect(event.admin.equals(creator.publicKey)).toBe(true);
    expect(event.shareholders.map((s) => [s.address.toBase58(), s.shareBps])).toEqual([[creator.publicKey.toBase58(), 10_000]]);

    const config = await fetchSharingConfig();
    expect(config.shareholders.map((s) => [s.address.toBase58(), s.shareBps])).toEqual([
      [partnerA.toBase58(), 6_000],
      [partnerB.toBase58(), 4_000],
    ]);
    expect(config.adminRevoked).toBe(true);
  });

  test('distribute_creator_fees_v2 from the SDK pays later fees by the new split, the vault keeping any rounding dust', async () => {
    await buy();
    const accrued = await pending();
    const vaultBefore = await lamports(vault);
    const before = { creator: await lamports(creator.publicKey), a: await lamports(partnerA), b: await lamports(partnerB) };
    const ix = await PUMP_SDK.distributeCreatorFeesV2({
      mint,
      sharingConfig: await fetchSharingConfig(),
      sharingConfigAddress: sharingConfig,
      quoteMint: NATIVE_MINT,
      payer: creator.publicKey,
      shouldInitializeAta: true,
      quoteTokenProgram: TOKEN_PROGRAM_ID,
    });

    const signature = await send([ix], [creator]);

    const toA = (accrued * 6_000n) / 10_000n;
    const toB = (accrued * 4_000n) / 10_000n;
    expect((await lamports(partnerA)) - before.a).toBe(toA);
    expect((await lamports(partnerB)) - before.b).toBe(toB);
    expect((await lamports(creator.publicKey)) - before.creator).toBe(-TX_FEE);
    expect(vaultBefore - (await lamports(vault))).toBe(toA + toB);
    const [event] = await distributeEvents(signature);
    expect(event.distributed.toString()).toBe((toA + toB).toString());
  });

  test('distribute_creator_fees_v2 refuses shareholders that are not the config\'s, and a quote the curve is not in', async () => {
    await buy();
    const config = await fetchSharingConfig();
    const build = (quoteMint: PublicKey, shareholders = config.shareholders) =>
      PUMP_SDK.distributeCreatorFeesV2({
        mint,
        sharingConfig: { ...config, shareholders },
        sharingConfigAddress: sharingConfig,
        quoteMint,
        payer: creator.publicKey,
        shouldInitializeAta: false,
        quoteTokenProgram: TOKEN_PROGRAM_ID,
      });
    const refusal = async (ix: TransactionInstruction) => {
      const error = await send([ix], [creator]).then(
        () => new Error('expected the distribution to be refused'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SendTransactionError);
      return (error as SendTransactionError).logs?.join('\n');
    };
    const before = await lamports(vault);

    expect(await refusal(await build(NATIVE_MINT, [...config.shareholders].reverse()))).toContain('custom program error: 0x17a6'); // 6054
    expect(await refusal(await build(NATIVE_MINT, config.shareholders.slice(0, 1)))).toContain('custom program error: 0x17a6');
    const usdc = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(await refusal(await build(usdc))).toContain('custom program error: 0x17af'); // 6063 UnsupportedQuoteMint
    expect(await lamports(vault)).toBe(before);
  });
});
