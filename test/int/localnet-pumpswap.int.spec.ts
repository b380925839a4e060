import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import {
  MINT_SIZE,
  NATIVE_MINT,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import BN from 'bn.js';
import {
  OFFLINE_PUMP_AMM_PROGRAM,
  OnlinePumpAmmSdk,
  PUMP_AMM_SDK,
  buyBaseInput,
  buyQuoteInput,
  coinCreatorVaultAtaPda,
  coinCreatorVaultAuthorityPda,
  sellBaseInput,
} from '@pump-fun/pump-swap-sdk';
import { PUMP_SDK, feeSharingConfigPda, getPumpFeeProgram } from '@pump-fun/pump-sdk';
import type { GenesisContext } from '../../apps/localnet/src/runtime/program';
import { pumpSwapProgram, seedPool } from '../../apps/localnet/src/programs/pumpSwap';
import { pumpFeesProgram } from '../../apps/localnet/src/programs/pumpFees';
import { encodeSharingConfig, sharingConfigPda } from '../../apps/localnet/src/programs/pumpFees/state';
import { PUMP_FEES_PROGRAM_ID, pumpPoolAuthority } from '../../apps/localnet/src/programs/pumpSwap/state';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { encodeBondingCurve } from '../../apps/localnet/src/programs/pump/state';
import { localnet, type LocalnetClient } from '../support/localnet';
import { swapPricing } from '../support/pumpAmm';

// PumpSwap and pump-fees emulated on the localnet, driven over JSON-RPC by the unmodified swap and pump SDKs.

const treasury = Keypair.generate().publicKey;
const usdMint = Keypair.generate().publicKey;
const mintAuthority = Keypair.generate().publicKey;
const pumpMint = Keypair.generate().publicKey;
const coinCreator = Keypair.generate();
const feeAdmin = Keypair.generate();
const feeMint = Keypair.generate().publicKey;
const USD = 1_000_000n;
const SOL = BigInt(LAMPORTS_PER_SOL);

function seed(g: GenesisContext): void {
  const system = (lamports: bigint) => ({ lamports, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
  const poolAuthority = pumpPoolAuthority(pumpMint);
  g.setAccount(treasury, system(1_000_000n * SOL));
  g.setAccount(poolAuthority, system(1_000n * SOL));
  const mint = (address: PublicKey) => [
    SystemProgram.createAccount({ fromPubkey: treasury, newAccountPubkey: address, lamports: Number(g.rentExempt(MINT_SIZE)), space: MINT_SIZE, programId: new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA') }),
    createInitializeMint2Instruction(address, 6, mintAuthority, null),
  ];
  const fund = (address: PublicKey, owner: PublicKey, amount: bigint) => {
    const ata = getAssociatedTokenAddressSync(address, owner, true);
    return [createAssociatedTokenAccountIdempotentInstruction(treasury, ata, owner, address), createMintToInstruction(address, ata, mintAuthority, amount)];
  };
  g.run([...mint(usdMint), ...fund(usdMint, treasury, 1_500_000n * USD), ...mint(pumpMint), ...fund(pumpMint, poolAuthority, 206_900_000n * USD)], [treasury, usdMint, pumpMint, mintAuthority, poolAuthority]);
  // The local stablecoin's market, and a graduated pump coin whose creator earns PumpSwap creator fees.
  seedPool(g, { baseMint: usdMint, quoteMint: NATIVE_MINT, baseAmount: 1_500_000n * USD, quoteAmount: 10_000n * SOL, creator: treasury, index: 0 });
  seedPool(g, { baseMint: pumpMint, quoteMint: NATIVE_MINT, baseAmount: 206_900_000n * USD, quoteAmount: 85n * SOL, creator: poolAuthority, index: 0, coinCreator: coinCreator.publicKey });
  const [config, bump] = sharingConfigPda(feeMint);
  const data = encodeSharingConfig({ bump, version: 2, status: 'Active', mint: feeMint, admin: feeAdmin.publicKey, adminRevoked: false, shareholders: [{ address: feeAdmin.publicKey, shareBps: 10_000 }] });
  g.setAccount(config, { lamports: g.rentExempt(data.length), data, owner: PUMP_FEES_PROGRAM_ID, executable: false });
}

const poolOf = (baseMint: PublicKey, creator: PublicKey) =>
  PublicKey.findProgramAddressSync(
    [Buffer.from('pool'), Buffer.from([0, 0]), creator.toBuffer(), baseMint.toBuffer(), NATIVE_MINT.toBuffer()],
    new PublicKey('pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA'),
  )[0];
const usdPool = poolOf(usdMint, treasury);
const pumpPool = poolOf(pumpMint, pumpPoolAuthority(pumpMint));

type BuyEvent = { baseAmountOut: BN; quoteAmountIn: BN; lpFee: BN; protocolFee: BN; coinCreatorFee: BN; userQuoteAmountIn: BN; quoteAmountInWithLpFee: BN; protocolFeeRecipientTokenAccount: PublicKey };

describe('PumpSwap and pump-fees on the localnet, through the unmodified SDKs', () => {
  let t: LocalnetClient;
  let sdk: OnlinePumpAmmSdk;
  beforeAll(async () => {
    t = await localnet({ programs: [pumpSwapProgram, pumpFeesProgram], seeds: [seed] });
    sdk = new OnlinePumpAmmSdk(t.connection);
  });
  afterAll(() => t.close());

  const tokenBalance = async (account: PublicKey) => {
    const info = await t.connection.getAccountInfo(account);
    return info ? info.data.readBigUInt64LE(64) : 0n;
  };
  const lamports = async (account: PublicKey) => BigInt(await t.connection.getBalance(account));
  const send = (instructions: TransactionInstruction[], signer: Keypair) => sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), [signer]);
  const events = async (signature: string, name: string) => {
    const tx = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
    return (tx?.meta?.logMessages ?? [])
      .filter((l) => l.startsWith('Program data: '))
      .map((l) => OFFLINE_PUMP_AMM_PROGRAM.coder.events.decode(l.slice('Program data: '.length)))
      .filter((e) => e?.name === name)
      .map((e) => e!.data);
  };
  const pricing = swapPricing;

  test('buy by quote in and sell by base in move exactly what the SDK quotes', async () => {
    const user = await t.funded(20);
    const before = await sdk.swapSolanaState(usdPool, user.publicKey);
    expect(before.feeConfig).not.toBeNull();
    const quote = new BN(2 * LAMPORTS_PER_SOL);
    const predicted = buyQuoteInput({ ...pricing(before), quote });
    const charged = buyBaseInput({ ...pricing(before), base: predicted.base });
    const signature = await send(await PUMP_AMM_SDK.buyQuoteInput(before, quote, 1), user);

    const [event] = (await events(signature, 'buyEvent')) as BuyEvent[];
    expect(event.baseAmountOut.toString()).toBe(predicted.base.toString());
    expect(event.quoteAmountIn.toString()).toBe(charged.internalQuoteAmount.toString());
    expect(event.userQuoteAmountIn.toString()).toBe(charged.uiQuote.toString());
    expect(await tokenBalance(before.userBaseTokenAccount)).toBe(BigInt(predicted.base.toString()));
    const afterBuy = await sdk.swapSolanaState(usdPool, user.publicKey);
    expect(afterBuy.poolBaseAmount.toString()).toBe(before.poolBaseAmount.sub(predicted.base).toString());
    expect(afterBuy.poolQuoteAmount.toString()).toBe(before.poolQuoteAmount.add(event.quoteAmountInWithLpFee).toString());
    expect(await tokenBalance(event.protocolFeeRecipientTokenAccount)).toBe(BigInt(event.protocolFee.toString()));
    expect(event.protocolFee.gtn(0)).toBe(true);

    const sold = predicted.base.divn(2);
    const quoted = sellBaseInput({ ...pricing(afterBuy), base: sold });
    const feeAtasBefore = await t.connection.getMultipleAccountsInfo(afterBuy.globalConfig.protocolFeeRecipients.map((r) => getAssociatedTokenAddressSync(NATIVE_MINT, r, true)));
    const lamportsBefore = await lamports(user.publicKey);
    const sellSignature = await send(await PUMP_AMM_SDK.sellBaseInput(afterBuy, sold, 1), user);
    const [sellEvent] = (await events(sellSignature, 'sellEvent')) as { userQuoteAmountOut: BN; protocolFeeRecipient: PublicKey }[];
    expect(sellEvent.userQuoteAmountOut.toString()).toBe(quoted.uiQuote.toString());
    // The SDK picks a protocol fee recipient at random; the seller pays the rent of its wSOL account if it is new.
    const recipient = afterBuy.globalConfig.protocolFeeRecipients.findIndex((r) => r.equals(sellEvent.protocolFeeRecipient));
    const feeAtaRent = feeAtasBefore[recipient] ? 0n : BigInt(await t.connection.getMinimumBalanceForRentExemption(165));
    // The SDK unwraps through a fresh wSOL account it closes again, so SOL moves by the quote less fee and rent.
    expect((await lamports(user.publicKey)) - lamportsBefore).toBe(BigInt(quoted.uiQuote.toString()) - 5000n - feeAtaRent);
    expect(await tokenBalance(before.userBaseTokenAccount)).toBe(BigInt(predicted.base.sub(sold).toString()));
    const afterSell = await sdk.swapSolanaState(usdPool, user.publicKey);
    expect(afterSell.poolBaseAmount.toString()).toBe(afterBuy.poolBaseAmount.add(sold).toString());
  });

  test('a buy above the slippage limit fails with ExceededSlippage and changes nothing but the fee', async () => {
    const user = await t.funded(5);
    const state = await sdk.swapSolanaState(usdPool, user.publicKey);
    const base = new BN((100n * USD).toString());
    const { uiQuote } = buyBaseInput({ ...pricing(state), base });
    const tx = new Transaction().add(...(await PUMP_AMM_SDK.buyInstructions(state, base, uiQuote.subn(1))));
    tx.feePayer = user.publicKey;
    const latest = await t.connection.getLatestBlockhash();
    tx.recentBlockhash = latest.blockhash;
    tx.sign(user);
    const lamportsBefore = await lamports(user.publicKey);
    const signature = await t.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const { value } = await t.connection.confirmTransaction({ signature, ...latest });
    const buyIndex = tx.instructions.findIndex((ix) => ix.programId.equals(pumpSwapProgram.programId));
    expect(value.err).toEqual({ InstructionError: [buyIndex, { Custom: 6004 }] });
    expect(await lamports(user.publicKey)).toBe(lamportsBefore - 5000n);
    expect(await t.connection.getAccountInfo(state.userBaseTokenAccount)).toBeNull();
    const after = await sdk.swapSolanaState(usdPool, user.publicKey);
    expect([after.poolBaseAmount.toString(), after.poolQuoteAmount.toString()]).toEqual([state.poolBaseAmount.toString(), state.poolQuoteAmount.toString()]);
  });

  test('creator fees of a graduated pump coin accrue in the vault and collect_coin_creator_fee pays them out', async () => {
    const user = await t.funded(5);
    await t.connection.requestAirdrop(coinCreator.publicKey, LAMPORTS_PER_SOL).then(async (sig) => t.connection.confirmTransaction({ signature: sig, ...(await t.connection.getLatestBlockhash()) }));
    const state = await sdk.swapSolanaState(pumpPool, user.publicKey);
    expect(state.pool.coinCreator.equals(coinCreator.publicKey)).toBe(true);
    const predicted = buyQuoteInput({ ...pricing(state), quote: new BN(LAMPORTS_PER_SOL) });
    const charged = buyBaseInput({ ...pricing(state), base: predicted.base });
    const signature = await send(await PUMP_AMM_SDK.buyQuoteInput(state, new BN(LAMPORTS_PER_SOL), 1), user);
    const [event] = (await events(signature, 'buyEvent')) as BuyEvent[];
    expect(event.userQuoteAmountIn.toString()).toBe(charged.uiQuote.toString());
    // Mainnet's first tier for a pump pool: 30 bps to the coin creator, rounded up.
    const creatorFee = (BigInt(charged.internalQuoteAmount.toString()) * 30n + 9_999n) / 10_000n;
    expect(event.coinCreatorFee.toString()).toBe(creatorFee.toString());
    const vaultAta = coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(coinCreator.publicKey), NATIVE_MINT, new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'));
    expect(await tokenBalance(vaultAta)).toBe(creatorFee);

    const collectState = await sdk.collectCoinCreatorFeeSolanaState(coinCreator.publicKey);
    const creatorBefore = await lamports(coinCreator.publicKey);
    await send(await PUMP_AMM_SDK.collectCoinCreatorFee(collectState), coinCreator);
    expect(await tokenBalance(vaultAta)).toBe(0n);
    expect((await lamports(coinCreator.publicKey)) - creatorBefore).toBe(creatorFee - 5000n);
  });

  describe('pump-fees update_fee_shares', () => {
    const feeProgram = getPumpFeeProgram(null as never);
    const vaultAta = () => coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(feeSharingConfigPda(feeMint)), NATIVE_MINT, new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'));
    // Built without the SDK's client-side checks, to show the program itself refuses.
    const rawUpdate = (shareholders: { address: PublicKey; shareBps: number }[]) =>
      feeProgram.methods
        .updateFeeShares(shareholders)
        .accountsPartial({ authority: feeAdmin.publicKey, mint: feeMint, coinCreatorVaultAta: vaultAta() })
        .remainingAccounts([{ pubkey: feeAdmin.publicKey, isWritable: true, isSigner: false }])
        .instruction();
    const expectCustom = async (ix: TransactionInstruction, code: number) => {
      const tx = new Transaction().add(ix);
      const latest = await t.connection.getLatestBlockhash();
      tx.recentBlockhash = latest.blockhash;
      tx.feePayer = feeAdmin.publicKey;
      tx.sign(feeAdmin);
      const signature = await t.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      const { value } = await t.connection.confirmTransaction({ signature, ...latest });
      expect(value.err).toEqual({ InstructionError: [0, { Custom: code }] });
    };
    const readConfig = async () => PUMP_SDK.decodeSharingConfig((await t.connection.getAccountInfo(feeSharingConfigPda(feeMint)))!);

    beforeAll(async () => {
      const sig = await t.connection.requestAirdrop(feeAdmin.publicKey, LAMPORTS_PER_SOL);
      await t.connection.confirmTransaction({ signature: sig, ...(await t.connection.getLatestBlockhash()) });
    });

    test('refuses eleven shareholders and shares that do not total 10,000 bps, then accepts a valid split once', async () => {
      const holders = (n: number) => Array.from({ length: n }, () => Keypair.generate().publicKey);
      await expectCustom(await rawUpdate(holders(11).map((address, i) => ({ address, shareBps: i === 0 ? 1_000 : 900 }))), 6011);
      await expectCustom(await rawUpdate(holders(3).map((address) => ({ address, shareBps: 3_333 }))), 6014);
      expect((await readConfig()).shareholders.map((s) => s.address.toBase58())).toEqual([feeAdmin.publicKey.toBase58()]);

      const split = holders(10).map((address) => ({ address, shareBps: 1_000 }));
      await send([await PUMP_SDK.updateFeeShares({ authority: feeAdmin.publicKey, mint: feeMint, currentShareholders: [feeAdmin.publicKey], newShareholders: split })], feeAdmin);
      const config = await readConfig();
      expect(config.shareholders.map((s) => [s.address.toBase58(), s.shareBps])).toEqual(split.map((s) => [s.address.toBase58(), s.shareBps]));
      expect(config.adminRevoked).toBe(true);

      await expectCustom(await rawUpdate([{ address: feeAdmin.publicKey, shareBps: 10_000 }]), 6009);
    });
  });

  describe('creator fee sharing of a graduated coin (pump-fees, pump and PumpSwap together)', () => {
    const sharedMint = Keypair.generate().publicKey;
    const creator = Keypair.generate();
    const [alice, bob] = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const sharedPool = poolOf(sharedMint, pumpPoolAuthority(sharedMint));
    const config = feeSharingConfigPda(sharedMint);
    let all: LocalnetClient;
    let swap: OnlinePumpAmmSdk;

    function seedGraduatedCoin(g: GenesisContext): void {
      const authority = pumpPoolAuthority(sharedMint);
      g.setAccount(authority, { lamports: 100n * SOL, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
      const ata = getAssociatedTokenAddressSync(sharedMint, authority, true);
      g.run(
        [
          SystemProgram.createAccount({ fromPubkey: treasury, newAccountPubkey: sharedMint, lamports: Number(g.rentExempt(MINT_SIZE)), space: MINT_SIZE, programId: new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA') }),
          createInitializeMint2Instruction(sharedMint, 6, mintAuthority, null),
          createAssociatedTokenAccountIdempotentInstruction(treasury, ata, authority, sharedMint),
          createMintToInstruction(sharedMint, ata, mintAuthority, 206_900_000n * USD),
        ],
        [treasury, sharedMint, mintAuthority],
      );
      seedPool(g, { baseMint: sharedMint, quoteMint: NATIVE_MINT, baseAmount: 206_900_000n * USD, quoteAmount: 85n * SOL, creator: authority, index: 0, coinCreator: creator.publicKey });
      const curve = encodeBondingCurve({
        virtualTokenReserves: 0n, virtualQuoteReserves: 0n, realTokenReserves: 0n, realQuoteReserves: 0n, tokenTotalSupply: 1_000_000_000n * USD, complete: true,
        creator: creator.publicKey, isMayhemMode: false, isCashbackCoin: false, quoteMint: PublicKey.default, creatorFeeBps: 0n, canEditCreatorFee: false, isHolderReward: false,
      });
      const [curveAddress] = PublicKey.findProgramAddressSync([Buffer.from('bonding-curve'), sharedMint.toBuffer()], new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P'));
      g.setAccount(curveAddress, { lamports: g.rentExempt(curve.length), data: curve, owner: new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P'), executable: false });
    }

    beforeAll(async () => {
      all = await localnet({ programs: emulatedPrograms(), seeds: [(g) => g.setAccount(treasury, { lamports: 1_000n * SOL, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false }), seedGraduatedCoin] });
      swap = new OnlinePumpAmmSdk(all.connection);
      const sig = await all.connection.requestAirdrop(creator.publicKey, LAMPORTS_PER_SOL);
      await all.connection.confirmTransaction({ signature: sig, ...(await all.connection.getLatestBlockhash()) });
    });
    afterAll(() => all.close());

    const vaultAta = coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(config), NATIVE_MINT, new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'));
    const balanceOf = async (a: PublicKey) => BigInt(await all.connection.getBalance(a));
    const buyFor = async (sol: number) => {
      const user = Keypair.generate();
      const sig = await all.connection.requestAirdrop(user.publicKey, (sol + 1) * LAMPORTS_PER_SOL);
      await all.connection.confirmTransaction({ signature: sig, ...(await all.connection.getLatestBlockhash()) });
      const state = await swap.swapSolanaState(sharedPool, user.publicKey);
      await sendAndConfirmTransaction(all.connection, new Transaction().add(...(await PUMP_AMM_SDK.buyQuoteInput(state, new BN(sol * LAMPORTS_PER_SOL), 1))), [user]);
      const info = await all.connection.getAccountInfo(vaultAta);
      return info!.data.readBigUInt64LE(64);
    };

    test('create_fee_sharing_config points the curve and the pool at the config; fees then reach the shareholders', async () => {
      await sendAndConfirmTransaction(all.connection, new Transaction().add(await PUMP_SDK.createFeeSharingConfig({ creator: creator.publicKey, mint: sharedMint, pool: sharedPool })), [creator]);
      const created = PUMP_SDK.decodeSharingConfig((await all.connection.getAccountInfo(config))!);
      expect(created).toMatchObject({ admin: creator.publicKey, adminRevoked: false, shareholders: [{ address: creator.publicKey, shareBps: 10_000 }] });
      expect((await swap.fetchPool(sharedPool)).coinCreator.equals(config)).toBe(true);
      const curveAddress = PublicKey.findProgramAddressSync([Buffer.from('bonding-curve'), sharedMint.toBuffer()], new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P'))[0];
      expect(PUMP_SDK.decodeBondingCurve((await all.connection.getAccountInfo(curveAddress))!).creator.equals(config)).toBe(true);

      // Fees accrued before the split go to the shareholders at that time: the creator alone.
      const accrued = await buyFor(2);
      const pumpVault = PublicKey.findProgramAddressSync([Buffer.from('creator-vault'), config.toBuffer()], new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P'))[0];
      const vaultRent = BigInt(await all.connection.getMinimumBalanceForRentExemption(0));
      const creatorBefore = await balanceOf(creator.publicKey);
      const split = [{ address: alice, shareBps: 6_000 }, { address: bob, shareBps: 4_000 }];
      await sendAndConfirmTransaction(
        all.connection,
        new Transaction().add(await PUMP_SDK.updateFeeShares({ authority: creator.publicKey, mint: sharedMint, currentShareholders: [creator.publicKey], newShareholders: split })),
        [creator],
      );
      expect((await balanceOf(creator.publicKey)) - creatorBefore).toBe(accrued - vaultRent - 5000n);
      expect(await balanceOf(pumpVault)).toBe(vaultRent);
      expect(PUMP_SDK.decodeSharingConfig((await all.connection.getAccountInfo(config))!)).toMatchObject({ adminRevoked: true, shareholders: split });

      // Later fees: swept from PumpSwap into pump's vault, then distributed by share.
      const later = await buyFor(3);
      const payer = await all.funded(1);
      const sharing = PUMP_SDK.decodeSharingConfig((await all.connection.getAccountInfo(config))!);
      await sendAndConfirmTransaction(
        all.connection,
        new Transaction().add(
          await PUMP_SDK.transferCreatorFeesToPumpV2({ payer: payer.publicKey, mint: sharedMint, quoteMint: NATIVE_MINT, quoteTokenProgram: new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA') }),
          await PUMP_SDK.distributeCreatorFees({ mint: sharedMint, sharingConfig: sharing, sharingConfigAddress: config }),
        ),
        [payer],
      );
      expect(await balanceOf(alice)).toBe((later * 6_000n) / 10_000n);
      expect(await balanceOf(bob)).toBe((later * 4_000n) / 10_000n);
    });
  });
});
