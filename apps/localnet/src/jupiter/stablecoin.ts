import { createHash } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram } from '@solana/web3.js';
import {
  MINT_SIZE,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
} from '@solana/spl-token';
import type { GenesisContext } from '../runtime/program';
import { seedPool } from '../programs/pumpSwap';
import { associatedTokenAddress } from '../runtime/pda';

/** Sandbox keys derived from fixed labels, so every localnet has the same stablecoin at the same address. */
const sandboxKey = (label: string) => Keypair.fromSeed(createHash('sha256').update(label).digest());

export const LOCAL_USD_MINT = sandboxKey('localnet usd mint').publicKey;
/** Mint authority of the stablecoin and creator of its pool. */
export const LOCAL_USD_TREASURY = sandboxKey('localnet usd treasury').publicKey;
export const LOCAL_USD_DECIMALS = 6;
export const LOCAL_USD_POOL_INDEX = 0;

export interface StablecoinSeedOptions {
  /** The SOL price the pool opens at, so the stablecoin starts at 1 USD; use the same value as `jupiterRoutes`. */
  solUsd?: number;
  /** SOL on the pool's quote side; the stablecoin side is this times `solUsd`. */
  poolSol?: number;
}

/**
 * The local stablecoin: a 6-decimal SPL mint and a constant-product PumpSwap pool against wrapped SOL, opened at
 * one stablecoin per `1 / solUsd` SOL. Its whole supply sits in the pool, so the only way to hold it is to buy it.
 */
export function stablecoinSeed(options: StablecoinSeedOptions = {}): (genesis: GenesisContext) => void {
  const solUsd = options.solUsd ?? 150;
  const poolSol = options.poolSol ?? 10_000;
  if (!(solUsd > 0) || !(poolSol > 0)) throw new RangeError('stablecoinSeed needs a positive solUsd and poolSol');
  const quoteAmount = BigInt(Math.round(poolSol * LAMPORTS_PER_SOL));
  const baseAmount = BigInt(Math.round(poolSol * solUsd * 10 ** LOCAL_USD_DECIMALS));

  return (genesis) => {
    const treasuryAta = associatedTokenAddress(LOCAL_USD_MINT, LOCAL_USD_TREASURY, TOKEN_PROGRAM_ID);
    const mintRent = genesis.rentExempt(MINT_SIZE);
    // Enough for the mint, the pool's token accounts and the SOL side of the pool.
    const treasuryLamports = quoteAmount + mintRent + BigInt(10 * LAMPORTS_PER_SOL);
    genesis.setAccount(LOCAL_USD_TREASURY, { lamports: treasuryLamports, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
    genesis.run(
      [
        SystemProgram.createAccount({
          fromPubkey: LOCAL_USD_TREASURY,
          newAccountPubkey: LOCAL_USD_MINT,
          lamports: Number(mintRent),
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(LOCAL_USD_MINT, LOCAL_USD_DECIMALS, LOCAL_USD_TREASURY, null, TOKEN_PROGRAM_ID),
        createAssociatedTokenAccountIdempotentInstruction(LOCAL_USD_TREASURY, treasuryAta, LOCAL_USD_TREASURY, LOCAL_USD_MINT, TOKEN_PROGRAM_ID),
        createMintToInstruction(LOCAL_USD_MINT, treasuryAta, LOCAL_USD_TREASURY, baseAmount, [], TOKEN_PROGRAM_ID),
      ],
      [LOCAL_USD_TREASURY, LOCAL_USD_MINT],
    );
    seedPool(genesis, {
      baseMint: LOCAL_USD_MINT,
      quoteMint: NATIVE_MINT,
      baseAmount,
      quoteAmount,
      creator: LOCAL_USD_TREASURY,
      index: LOCAL_USD_POOL_INDEX,
    });
  };
}
