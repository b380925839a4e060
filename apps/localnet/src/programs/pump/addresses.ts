import { PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT } from '@solana/spl-token';
import { associatedTokenAddress, findPda } from '../../runtime/pda';

export const PUMP_PROGRAM_ID = new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P');
export const PUMP_FEES_PROGRAM_ID = new PublicKey('pfeeUxB6jkeY1Hxd7CsFCAjcbHA9rWtchMGdZ6VojVZ');
export const PUMP_AMM_PROGRAM_ID = new PublicKey('pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA');
export const MAYHEM_PROGRAM_ID = new PublicKey('MAyhSmzXzV1pTf7LsNkrNwkWKTo4ougAJ1PPg47MD4e');
export const PUMP_TOKEN_MINT = new PublicKey('pumpCmXqMfrsAkQ5r49WcJnRayYRqmXz6ae8H7H9Dfn');
export { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT };

const pumpPda = (...seeds: Buffer[]): PublicKey => findPda(seeds, PUMP_PROGRAM_ID)[0];
const seed = (text: string): Buffer => Buffer.from(text);

export const GLOBAL = pumpPda(seed('global'));
export const MINT_AUTHORITY = pumpPda(seed('mint-authority'));
export const GLOBAL_VOLUME_ACCUMULATOR = pumpPda(seed('global_volume_accumulator'));
export const EVENT_AUTHORITY = pumpPda(seed('__event_authority'));
export const [FEE_CONFIG, FEE_CONFIG_BUMP] = findPda([seed('fee_config'), PUMP_PROGRAM_ID.toBuffer()], PUMP_FEES_PROGRAM_ID);
export const AMM_GLOBAL_CONFIG = findPda([seed('global_config')], PUMP_AMM_PROGRAM_ID)[0];
export const AMM_EVENT_AUTHORITY = findPda([seed('__event_authority')], PUMP_AMM_PROGRAM_ID)[0];

export const bondingCurvePda = (mint: PublicKey): PublicKey => pumpPda(seed('bonding-curve'), mint.toBuffer());
export const bondingCurveV2Pda = (mint: PublicKey): PublicKey => pumpPda(seed('bonding-curve-v2'), mint.toBuffer());
export const creatorVaultPda = (creator: PublicKey): PublicKey => pumpPda(seed('creator-vault'), creator.toBuffer());
export const userVolumeAccumulatorPda = (user: PublicKey): PublicKey => pumpPda(seed('user_volume_accumulator'), user.toBuffer());
export const holderRewardsPda = (mint: PublicKey): PublicKey => pumpPda(seed('holder-rewards'), mint.toBuffer());
export const poolAuthorityPda = (mint: PublicKey): PublicKey => pumpPda(seed('pool-authority'), mint.toBuffer());
export const sharingConfigPda = (mint: PublicKey): PublicKey =>
  findPda([seed('sharing-config'), mint.toBuffer()], PUMP_FEES_PROGRAM_ID)[0];

/** The canonical PumpSwap pool a curve migrates into (index 0, created by the mint's pool authority). */
export function canonicalPoolPda(mint: PublicKey, quoteMint: PublicKey = NATIVE_MINT): PublicKey {
  const index = Buffer.alloc(2);
  return findPda(
    [seed('pool'), index, poolAuthorityPda(mint).toBuffer(), mint.toBuffer(), quoteMint.toBuffer()],
    PUMP_AMM_PROGRAM_ID,
  )[0];
}

export const lpMintPda = (pool: PublicKey): PublicKey => findPda([seed('pool_lp_mint'), pool.toBuffer()], PUMP_AMM_PROGRAM_ID)[0];

export const ata = (owner: PublicKey, mint: PublicKey, tokenProgram: PublicKey): PublicKey =>
  associatedTokenAddress(mint, owner, tokenProgram);
