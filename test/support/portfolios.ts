import { PublicKey, SystemProgram } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, MINT_SIZE, MintLayout, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { bondingCurvePda } from '@pump-fun/pump-sdk';
import type { GenesisContext } from '../../apps/localnet/src/runtime/program';
import { PUMP_PROGRAM_ID } from '../../apps/localnet/src/programs/pump/addresses';
import { GENESIS_GLOBAL } from '../../apps/localnet/src/programs/pump/genesis';
import { encodeBondingCurve } from '../../apps/localnet/src/programs/pump/state';

/** A mint written at genesis; with `curveSol`, a pump coin on its curve whose virtual SOL reserve is that many lamports. */
export interface SeededCoin {
  mint: PublicKey;
  decimals: number;
  programId: PublicKey;
  /** Virtual SOL reserve of its bonding curve (lamports); the curve's token reserve follows the constant product. */
  curveLamports?: bigint;
}

/** A token account written at genesis: the owner's associated one, or any address given. */
export interface SeededTokenAccount {
  mint: PublicKey;
  programId: PublicKey;
  raw: bigint;
  address?: PublicKey;
}

export interface SeededWallet {
  owner: PublicKey;
  lamports: bigint;
  tokens: SeededTokenAccount[];
}

/** The curve's token reserve at a virtual SOL reserve, on pump's initial constant product. */
export function curveTokens(lamports: bigint): bigint {
  return (GENESIS_GLOBAL.initialVirtualTokenReserves * GENESIS_GLOBAL.initialVirtualSolReserves) / lamports;
}

/** SOL per whole token of a seeded pump coin, as the market reader computes it. */
export function curvePriceSol(coin: SeededCoin): number {
  return Number(coin.curveLamports!) / 1e9 / (Number(curveTokens(coin.curveLamports!)) / 10 ** coin.decimals);
}

export function tokenAccountAddress(owner: PublicKey, token: SeededTokenAccount): PublicKey {
  return token.address ?? getAssociatedTokenAddressSync(token.mint, owner, true, token.programId);
}

/**
 * Citizens' wallets, coins and token accounts written straight into the local chain's genesis, so a test or a
 * benchmark starts with thousands of funded holders without sending a transaction for each.
 */
export function portfolioSeed(coins: SeededCoin[], wallets: SeededWallet[]): (genesis: GenesisContext) => void {
  return (genesis) => {
    const rent = (length: number) => genesis.rentExempt(length);
    for (const coin of coins) {
      const data = Buffer.alloc(MINT_SIZE);
      MintLayout.encode(
        {
          mintAuthorityOption: 0,
          mintAuthority: PublicKey.default,
          supply: 1_000_000_000n * 10n ** BigInt(coin.decimals),
          decimals: coin.decimals,
          isInitialized: true,
          freezeAuthorityOption: 0,
          freezeAuthority: PublicKey.default,
        },
        data,
      );
      genesis.setAccount(coin.mint, { lamports: rent(MINT_SIZE), data, owner: coin.programId, executable: false });
      if (coin.curveLamports === undefined) continue;
      const tokens = curveTokens(coin.curveLamports);
      const curve = encodeBondingCurve({
        virtualTokenReserves: tokens,
        virtualQuoteReserves: coin.curveLamports,
        realTokenReserves: tokens - (GENESIS_GLOBAL.initialVirtualTokenReserves - GENESIS_GLOBAL.initialRealTokenReserves),
        realQuoteReserves: coin.curveLamports - GENESIS_GLOBAL.initialVirtualSolReserves,
        tokenTotalSupply: GENESIS_GLOBAL.tokenTotalSupply,
        complete: false,
        creator: PublicKey.default,
        isMayhemMode: false,
        isCashbackCoin: false,
        quoteMint: PublicKey.default,
        creatorFeeBps: 0n,
        canEditCreatorFee: false,
        isHolderReward: false,
      });
      genesis.setAccount(bondingCurvePda(coin.mint), { lamports: rent(curve.length), data: curve, owner: PUMP_PROGRAM_ID, executable: false });
    }
    for (const wallet of wallets) {
      genesis.setAccount(wallet.owner, { lamports: wallet.lamports, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
      for (const token of wallet.tokens) {
        const data = Buffer.alloc(ACCOUNT_SIZE);
        AccountLayout.encode(
          {
            mint: token.mint,
            owner: wallet.owner,
            amount: token.raw,
            delegateOption: 0,
            delegate: PublicKey.default,
            state: 1,
            isNativeOption: 0,
            isNative: 0n,
            delegatedAmount: 0n,
            closeAuthorityOption: 0,
            closeAuthority: PublicKey.default,
          },
          data,
        );
        genesis.setAccount(tokenAccountAddress(wallet.owner, token), { lamports: rent(ACCOUNT_SIZE), data, owner: token.programId, executable: false });
      }
    }
  };
}
