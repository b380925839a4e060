import { PublicKey, SystemProgram } from '@solana/web3.js';
import {
  MINT_SIZE,
  MintLayout,
  NATIVE_MINT,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createSyncNativeInstruction,
  createTransferInstruction,
} from '@solana/spl-token';
import { GenesisContext } from '../../runtime/program';
import { LP_DECIMALS, newPool } from './createPool';
import {
  GLOBAL_CONFIG,
  GLOBAL_VOLUME_ACCUMULATOR,
  GlobalConfig,
  PUMP_AMM_PROGRAM_ID,
  encodeGlobalConfig,
  encodeIdleGlobalVolumeAccumulator,
  encodePool,
  isPumpPool,
} from './state';
import { associatedTokenAddress, findPda } from '../../runtime/pda';
import { RESERVED_FEE_RECIPIENTS } from '../pump/genesis';

const keys = (...addresses: string[]) => addresses.map((a) => new PublicKey(a));

/** Mainnet's PumpSwap admin and protocol fee recipients, so addresses seen on the localnet look like mainnet's. */
export const MAINNET_ADMIN = new PublicKey('FFWtrEQ4B4PKQoVuHYzZq8FabGkVatYzDpEVHsK5rrhF');
export const PROTOCOL_FEE_RECIPIENTS = keys(
  '62qc2CNXwrYqQScmEdiZFFAnJR262PxWEuNQtxfafNgV',
  '7VtfL8fvgNfhz17qKRMjzQEXgbdpnHHHQRh54R9jP2RJ',
  '7hTckgnGnLQR6sdH7YkqFTAA7VwTfYFaZ6EhEsU3saCX',
  '9rPYyANsfQZw3DnDmKE3YCQF5E8oD89UXoHn9JFEhJUz',
  'AVmoTthdrX6tKt4nDjco2D775W2YK3sDhxPcMmzUAmTY',
  'FWsW1xNtWscwNmKv6wVsU1iTzRN6wmmk3MjxRP5tT7hz',
  'G5UZAVbAf46s7cKWoyKu8kYTip9DGTpbLZ2qa9Aq69dP',
  'JCRGumoE9Qi5BBgULTgdgTLjSgkCMSbF62ZZfGs84JeU',
);
/** The SDK passes one of these on every swap; at 0 buyback bps they never receive anything. */
const BUYBACK_FEE_RECIPIENTS = Array.from({ length: 8 }, (_, i) => findPda([Buffer.from('localnet-buyback'), Buffer.from([i])], PUMP_AMM_PROGRAM_ID)[0]);

/** GlobalConfig with mainnet's rates; trades are priced by the pump-fees FeeConfig, these apply only without one. */
export const GENESIS_GLOBAL_CONFIG: GlobalConfig = {
  admin: MAINNET_ADMIN,
  lpFeeBasisPoints: 20n,
  protocolFeeBasisPoints: 5n,
  disableFlags: 0,
  protocolFeeRecipients: PROTOCOL_FEE_RECIPIENTS,
  coinCreatorFeeBasisPoints: 5n,
  adminSetCoinCreatorAuthority: MAINNET_ADMIN,
  whitelistPda: PublicKey.default,
  // A graduated mayhem coin pays its protocol fee to these; pump's mayhem recipients, so both venues agree.
  reservedFeeRecipient: RESERVED_FEE_RECIPIENTS[0],
  mayhemModeEnabled: true,
  reservedFeeRecipients: RESERVED_FEE_RECIPIENTS.slice(1),
  isCashbackEnabled: false,
  buybackFeeRecipients: BUYBACK_FEE_RECIPIENTS,
  buybackBasisPoints: 0n,
  boostAuthority: PublicKey.default,
  boostEnabled: false,
  creatorFeeConfigurable: false,
  maxConfigurableCreatorFeeBps: 0n,
};

export function pumpSwapGenesis(init: GenesisContext): void {
  const owned = (data: Buffer) => ({ lamports: init.rentExempt(data.length), data, owner: PUMP_AMM_PROGRAM_ID, executable: false });
  init.setAccount(GLOBAL_CONFIG, owned(encodeGlobalConfig(GENESIS_GLOBAL_CONFIG)));
  init.setAccount(GLOBAL_VOLUME_ACCUMULATOR, owned(encodeIdleGlobalVolumeAccumulator()));
  init.setAccount(NATIVE_MINT, nativeMint(init));
}

/** Every cluster has the wrapped-SOL mint from genesis, LiteSVM does not; PumpSwap pools quote in it. */
function nativeMint(init: GenesisContext) {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode({ mintAuthorityOption: 0, mintAuthority: PublicKey.default, supply: 0n, decimals: 9, isInitialized: true, freezeAuthorityOption: 0, freezeAuthority: PublicKey.default }, data);
  return { lamports: init.rentExempt(MINT_SIZE), data, owner: TOKEN_PROGRAM_ID, executable: false };
}

export interface SeedPoolParams {
  baseMint: PublicKey;
  quoteMint: PublicKey;
  baseAmount: bigint;
  quoteAmount: bigint;
  /**
   * A localnet-held signer that pays the pool's token accounts and funds them: wrapped SOL from its lamports,
   * any other mint from its associated token account, which must hold the amount.
   */
  creator: PublicKey;
  index: number;
  /** Only for a canonical pump pool (creator = pump's pool-authority PDA of the base mint): who earns creator fees. */
  coinCreator?: PublicKey;
  baseTokenProgram?: PublicKey;
  quoteTokenProgram?: PublicKey;
}

export interface SeededPool {
  pool: PublicKey;
  lpMint: PublicKey;
  poolBaseTokenAccount: PublicKey;
  poolQuoteTokenAccount: PublicKey;
}

/**
 * A permissionless constant-product pool written at genesis, in the state a pump migration leaves behind: reserves
 * in the pool's token accounts, `lp_supply` recorded, and no LP tokens in circulation.
 */
export function seedPool(genesis: GenesisContext, params: SeedPoolParams): SeededPool {
  const baseProgram = params.baseTokenProgram ?? TOKEN_PROGRAM_ID;
  const quoteProgram = params.quoteTokenProgram ?? TOKEN_PROGRAM_ID;
  const args = {
    index: params.index,
    baseAmountIn: params.baseAmount,
    quoteAmountIn: params.quoteAmount,
    coinCreator: params.coinCreator ?? PublicKey.default,
    isMayhemMode: false,
    isCashbackCoin: false,
    creatorFeeBps: 0n,
    canEditCreatorFee: false,
  };
  if (params.coinCreator && !isPumpPool(params.baseMint, params.creator)) throw new Error('only a canonical pump pool can have a coin creator');
  const { address, pool } = newPool(args, params.creator, params.baseMint, params.quoteMint, baseProgram, quoteProgram);

  const poolData = encodePool(pool);
  genesis.setAccount(address, { lamports: genesis.rentExempt(poolData.length), data: poolData, owner: PUMP_AMM_PROGRAM_ID, executable: false });
  const lpMintData = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    { mintAuthorityOption: 1, mintAuthority: address, supply: 0n, decimals: LP_DECIMALS, isInitialized: true, freezeAuthorityOption: 0, freezeAuthority: PublicKey.default },
    lpMintData,
  );
  genesis.setAccount(pool.lpMint, { lamports: genesis.rentExempt(MINT_SIZE), data: lpMintData, owner: TOKEN_2022_PROGRAM_ID, executable: false });

  const fund = (mint: PublicKey, program: PublicKey, poolAta: PublicKey, amount: bigint) =>
    mint.equals(NATIVE_MINT)
      ? [SystemProgram.transfer({ fromPubkey: params.creator, toPubkey: poolAta, lamports: amount }), createSyncNativeInstruction(poolAta)]
      : [createTransferInstruction(associatedTokenAddress(mint, params.creator, program), poolAta, params.creator, amount, [], program)];
  genesis.run(
    [
      createAssociatedTokenAccountIdempotentInstruction(params.creator, pool.poolBaseTokenAccount, address, params.baseMint, baseProgram),
      createAssociatedTokenAccountIdempotentInstruction(params.creator, pool.poolQuoteTokenAccount, address, params.quoteMint, quoteProgram),
      ...fund(params.baseMint, baseProgram, pool.poolBaseTokenAccount, params.baseAmount),
      ...fund(params.quoteMint, quoteProgram, pool.poolQuoteTokenAccount, params.quoteAmount),
    ],
    [params.creator],
  );
  return { pool: address, lpMint: pool.lpMint, poolBaseTokenAccount: pool.poolBaseTokenAccount, poolQuoteTokenAccount: pool.poolQuoteTokenAccount };
}
