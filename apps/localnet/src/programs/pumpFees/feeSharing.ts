import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PUMP_SDK } from '@pump-fun/pump-sdk';
import { InstructionAccount, InstructionContext, anchorError } from '../../runtime/program';
import { namedAccounts, readTokenAccount, requireAddress, requireSigner, requireWritable } from '../pumpSwap/accounts';
import { EVENT_AUTHORITY as AMM_EVENT_AUTHORITY, PUMP_AMM_PROGRAM_ID, PUMP_PROGRAM_ID, decodePool, poolAddress, pumpCreatorVault, pumpPoolAuthority } from '../pumpSwap/state';
import { FEES_EVENT_AUTHORITY, MAX_SHAREHOLDERS, SHARING_CONFIG_VERSION, SharingConfig, Shareholder, decodeSharingConfig, encodeFeesEvent, encodeSharingConfig, feesError, sharingConfigPda } from './state';
import { findPda } from '../../runtime/pda';

const pumpPda = (...seeds: Buffer[]) => findPda(seeds, PUMP_PROGRAM_ID)[0];
const PUMP_GLOBAL = pumpPda(Buffer.from('global'));
const PUMP_EVENT_AUTHORITY = pumpPda(Buffer.from('__event_authority'));
const bondingCurvePda = (mint: PublicKey) => pumpPda(Buffer.from('bonding-curve'), mint.toBuffer());

const DISCRIMINATORS = {
  migrateBondingCurveCreator: [87, 124, 52, 191, 52, 38, 214, 232],
  distributeCreatorFees: [165, 114, 103, 0, 121, 206, 247, 81],
  distributeCreatorFeesV2: [255, 203, 19, 79, 244, 68, 8, 159],
  migratePoolCoinCreator: [208, 8, 159, 4, 74, 175, 16, 58],
  transferCreatorFeesToPump: [139, 52, 134, 85, 228, 229, 108, 241],
  transferCreatorFeesToPumpV2: [1, 33, 78, 185, 33, 67, 44, 92],
} as const;

const meta = (pubkey: PublicKey, isWritable = false, isSigner = false) => ({ pubkey, isWritable, isSigner });
const cpi = (programId: PublicKey, name: keyof typeof DISCRIMINATORS, keys: ReturnType<typeof meta>[], args: Buffer = Buffer.alloc(0)) =>
  new TransactionInstruction({ programId, keys, data: Buffer.concat([Buffer.from(DISCRIMINATORS[name]), args]) });

function readBondingCurve(ctx: InstructionContext, account: InstructionAccount, mint: PublicKey) {
  requireAddress(account, bondingCurvePda(mint), 'ConstraintSeeds');
  const state = ctx.account(account.pubkey);
  if (!state || !state.owner.equals(PUMP_PROGRAM_ID)) throw anchorError('AccountNotInitialized', `bonding curve of ${mint.toBase58()} does not exist`);
  return PUMP_SDK.decodeBondingCurve({ data: state.data, owner: state.owner, lamports: Number(state.lamports), executable: false });
}

function readPumpGlobal(ctx: InstructionContext, account: InstructionAccount) {
  requireAddress(account, PUMP_GLOBAL, 'ConstraintSeeds');
  const state = ctx.account(account.pubkey);
  if (!state) throw anchorError('AccountNotInitialized', 'pump global does not exist');
  return PUMP_SDK.decodeGlobal({ data: state.data, owner: state.owner, lamports: Number(state.lamports), executable: false });
}

function readSharingConfig(ctx: InstructionContext, account: InstructionAccount, mint: PublicKey): SharingConfig {
  requireAddress(account, sharingConfigPda(mint)[0], 'ConstraintSeeds');
  const state = ctx.account(account.pubkey);
  const config = state && decodeSharingConfig(state.data);
  if (!config) throw anchorError('AccountNotInitialized', 'sharing config does not exist');
  return config;
}

/** A canonical pool stores legacy WSOL where a SOL bonding curve stores the zero key. */
const canonicalQuote = (curveQuote: PublicKey) => (curveQuote.equals(PublicKey.default) ? NATIVE_MINT : curveQuote);

/**
 * `create_fee_sharing_config`: opts a coin into shared creator fees. The config starts with the creator as its admin
 * and sole shareholder; pump's bonding curve (and the PumpSwap pool once graduated) then pay creator fees to it.
 */
export function createFeeSharingConfig(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, [
    'eventAuthority', 'program', 'payer', 'global', 'mint', 'sharingConfig', 'systemProgram', 'bondingCurve', 'pumpProgram',
    'pumpEventAuthority', 'pool', 'pumpAmmProgram', 'pumpAmmEventAuthority',
  ] as const);
  requireAddress(a.eventAuthority, FEES_EVENT_AUTHORITY, 'ConstraintSeeds');
  requireSigner(a.payer);
  requireWritable(a.sharingConfig);
  requireAddress(a.pumpProgram, PUMP_PROGRAM_ID);
  requireAddress(a.pumpEventAuthority, PUMP_EVENT_AUTHORITY, 'ConstraintSeeds');
  const mint = a.mint.pubkey;
  const [sharingConfig, bump] = sharingConfigPda(mint);
  requireAddress(a.sharingConfig, sharingConfig, 'ConstraintSeeds');
  const global = readPumpGlobal(ctx, a.global);
  const curve = readBondingCurve(ctx, a.bondingCurve, mint);
  // anchor passes the program's own id for an omitted optional account.
  const poolGiven = !a.pool.pubkey.equals(ctx.programId);

  let coinCreator = curve.creator;
  if (poolGiven) {
    requireAddress(a.pumpAmmProgram, PUMP_AMM_PROGRAM_ID);
    requireAddress(a.pumpAmmEventAuthority, AMM_EVENT_AUTHORITY, 'ConstraintSeeds');
    const expected = poolAddress(0, pumpPoolAuthority(mint), mint, canonicalQuote(curve.quoteMint))[0];
    const state = ctx.account(a.pool.pubkey);
    const pool = state?.owner.equals(PUMP_AMM_PROGRAM_ID) ? decodePool(state.data) : null;
    if (!a.pool.pubkey.equals(expected) || !pool || !pool.baseMint.equals(mint)) throw feesError('InvalidPool');
    coinCreator = pool.coinCreator;
  } else if (curve.complete) {
    throw feesError('AmmAccountsRequiredForGraduatedCoin');
  }
  const payer = a.payer.pubkey;
  if (!payer.equals(coinCreator) && !payer.equals(curve.creator) && !payer.equals(global.adminSetCreatorAuthority)) throw feesError('NotAuthorized');

  if (ctx.account(sharingConfig)) return;
  const admin = coinCreator;
  const config: SharingConfig = {
    bump,
    version: SHARING_CONFIG_VERSION,
    status: 'Active',
    mint,
    admin,
    adminRevoked: false,
    shareholders: [{ address: admin, shareBps: 10_000 }],
  };
  ctx.createOwned(payer, sharingConfig, encodeSharingConfig(config));

  ctx.invokeEmulated(cpi(PUMP_PROGRAM_ID, 'migrateBondingCurveCreator', [meta(mint), meta(a.bondingCurve.pubkey, true), meta(sharingConfig), meta(PUMP_EVENT_AUTHORITY), meta(PUMP_PROGRAM_ID)]));
  if (poolGiven) {
    ctx.invokeEmulated(cpi(PUMP_AMM_PROGRAM_ID, 'migratePoolCoinCreator', [meta(a.pool.pubkey, true), meta(sharingConfig), meta(AMM_EVENT_AUTHORITY), meta(PUMP_AMM_PROGRAM_ID)]));
  }
  ctx.emitData(
    encodeFeesEvent('CreateFeeSharingConfigEvent', {
      timestamp: ctx.clock.unixTimestamp,
      mint,
      bondingCurve: a.bondingCurve.pubkey,
      pool: poolGiven ? a.pool.pubkey : null,
      sharingConfig,
      admin,
      initialShareholders: config.shareholders,
      status: config.status,
    }),
  );
}

export function validateShareholders(shareholders: readonly Shareholder[]): void {
  if (shareholders.length === 0) throw feesError('NoShareholders');
  if (shareholders.length > MAX_SHAREHOLDERS) throw feesError('TooManyShareholders', `${shareholders.length} shareholders, at most ${MAX_SHAREHOLDERS}`);
  if (shareholders.some((s) => s.shareBps === 0)) throw feesError('ZeroShareNotAllowed');
  const addresses = new Set(shareholders.map((s) => s.address.toBase58()));
  if (addresses.size !== shareholders.length) throw feesError('DuplicateShareholder');
  const total = shareholders.reduce((sum, s) => sum + s.shareBps, 0);
  if (total !== 10_000) throw feesError('InvalidShareTotal', `shares total ${total} bps, not 10000`);
}

const V1_ACCOUNTS = [
  'eventAuthority', 'program', 'authority', 'global', 'mint', 'sharingConfig', 'bondingCurve', 'pumpCreatorVault', 'systemProgram',
  'pumpProgram', 'pumpEventAuthority', 'pumpAmmProgram', 'ammEventAuthority', 'wsolMint', 'tokenProgram', 'associatedTokenProgram',
  'coinCreatorVaultAuthority', 'coinCreatorVaultAta',
] as const;
const V2_ACCOUNTS = [
  'eventAuthority', 'program', 'authority', 'global', 'mint', 'sharingConfig', 'bondingCurve', 'pumpCreatorVault', 'pumpCreatorVaultAta',
  'systemProgram', 'pumpProgram', 'pumpEventAuthority', 'pumpAmmProgram', 'ammEventAuthority', 'quoteMint', 'tokenProgram',
  'associatedTokenProgram', 'coinCreatorVaultAuthority', 'coinCreatorVaultAta',
] as const;

/**
 * `update_fee_shares` (wSOL) and `update_fee_shares_v2` (any quote): pays what is pending to the current shareholders
 * (AMM creator fees are swept into pump's creator vault first, then pump distributes the vault), replaces the
 * shareholders and revokes the admin, so a split can be set once.
 */
export function updateFeeShares(ctx: InstructionContext, shareholders: Shareholder[], version: 1 | 2): void {
  let a: Record<(typeof V1_ACCOUNTS)[number], InstructionAccount> & { remaining: InstructionAccount[]; pumpCreatorVaultAta: InstructionAccount | null };
  let quoteMint: PublicKey;
  if (version === 1) {
    a = { ...namedAccounts(ctx, V1_ACCOUNTS), pumpCreatorVaultAta: null };
    requireAddress(a.wsolMint, NATIVE_MINT);
    quoteMint = NATIVE_MINT;
  } else {
    const v2 = namedAccounts(ctx, V2_ACCOUNTS);
    a = { ...v2, wsolMint: v2.quoteMint };
    quoteMint = v2.quoteMint.pubkey;
  }
  requireAddress(a.eventAuthority, FEES_EVENT_AUTHORITY, 'ConstraintSeeds');
  requireSigner(a.authority);
  requireWritable(a.sharingConfig);
  requireAddress(a.pumpProgram, PUMP_PROGRAM_ID);
  requireAddress(a.pumpEventAuthority, PUMP_EVENT_AUTHORITY, 'ConstraintSeeds');
  requireAddress(a.pumpAmmProgram, PUMP_AMM_PROGRAM_ID);
  requireAddress(a.ammEventAuthority, AMM_EVENT_AUTHORITY, 'ConstraintSeeds');
  requireAddress(a.global, PUMP_GLOBAL, 'ConstraintSeeds');
  const mint = a.mint.pubkey;
  const sharingConfig = a.sharingConfig.pubkey;
  const config = readSharingConfig(ctx, a.sharingConfig, mint);
  requireAddress(a.bondingCurve, bondingCurvePda(mint), 'ConstraintSeeds');
  const pumpVault = pumpCreatorVault(sharingConfig);
  requireAddress(a.pumpCreatorVault, pumpVault, 'ConstraintSeeds');

  if (!a.authority.pubkey.equals(config.admin)) throw feesError('NotAuthorized');
  if (config.adminRevoked) throw feesError('SharingConfigAdminRevoked');
  if (config.status !== 'Active') throw feesError('SharingConfigNotActive');
  validateShareholders(shareholders);

  const current = config.shareholders;
  const perHolder = quoteMint.equals(NATIVE_MINT) ? 1 : 2;
  if (a.remaining.length < current.length * perHolder) throw feesError('NotEnoughRemainingAccounts');
  current.forEach((holder, i) => {
    if (!a.remaining[i]!.pubkey.equals(holder.address)) throw feesError('ShareholderAccountMismatch');
  });
  const holderAccounts = a.remaining.slice(0, current.length * perHolder).map((r) => meta(r.pubkey, true));

  const vaultAccounts = [meta(sharingConfig), meta(a.coinCreatorVaultAuthority.pubkey, true), meta(a.coinCreatorVaultAta.pubkey, true), meta(pumpVault, true)];
  if (version === 1) {
    ctx.invokeEmulated(
      cpi(PUMP_AMM_PROGRAM_ID, 'transferCreatorFeesToPump', [
        meta(NATIVE_MINT), meta(TOKEN_PROGRAM_ID), meta(SystemProgram.programId), meta(ASSOCIATED_TOKEN_PROGRAM_ID), ...vaultAccounts, meta(AMM_EVENT_AUTHORITY), meta(PUMP_AMM_PROGRAM_ID),
      ]),
    );
  } else {
    ctx.invokeEmulated(
      cpi(PUMP_AMM_PROGRAM_ID, 'transferCreatorFeesToPumpV2', [
        meta(a.authority.pubkey, true, true), meta(quoteMint), meta(a.tokenProgram.pubkey), meta(SystemProgram.programId), meta(ASSOCIATED_TOKEN_PROGRAM_ID),
        ...vaultAccounts, meta(a.pumpCreatorVaultAta!.pubkey, true), meta(AMM_EVENT_AUTHORITY), meta(PUMP_AMM_PROGRAM_ID),
      ]),
    );
  }

  const pending = quoteMint.equals(NATIVE_MINT)
    ? (ctx.account(pumpVault)?.lamports ?? 0n) - ctx.rentExempt(0)
    : (a.pumpCreatorVaultAta ? (readTokenAccount(ctx, a.pumpCreatorVaultAta.pubkey)?.amount ?? 0n) : 0n);
  if (pending > 0n) {
    const common = [meta(mint), meta(a.bondingCurve.pubkey), meta(sharingConfig), meta(pumpVault, true), meta(SystemProgram.programId), meta(PUMP_EVENT_AUTHORITY), meta(PUMP_PROGRAM_ID)];
    ctx.invokeEmulated(
      version === 1
        ? cpi(PUMP_PROGRAM_ID, 'distributeCreatorFees', [...common, ...holderAccounts])
        : cpi(
            PUMP_PROGRAM_ID,
            'distributeCreatorFeesV2',
            [meta(a.authority.pubkey, true, true), ...common, meta(a.pumpCreatorVaultAta!.pubkey, true), meta(quoteMint), meta(a.tokenProgram.pubkey), meta(ASSOCIATED_TOKEN_PROGRAM_ID), ...holderAccounts],
            Buffer.from([1]),
          ),
    );
  }

  const updated: SharingConfig = { ...config, shareholders, adminRevoked: true };
  ctx.writeOwned(sharingConfig, encodeSharingConfig(updated));
  ctx.emitData(
    encodeFeesEvent('UpdateFeeSharesEvent', {
      timestamp: ctx.clock.unixTimestamp,
      mint,
      sharingConfig,
      admin: config.admin,
      newShareholders: shareholders,
      version: config.version,
    }),
  );
}
