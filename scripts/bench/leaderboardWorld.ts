import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import type { SeededCoin, SeededWallet } from '../../test/support/portfolios';

export const HELD = 3;
export const SOL_USD = 150;

const key = (label: string) => new PublicKey(createHash('sha256').update(label).digest());

/**
 * The leaderboard benchmark's world, the same in the chain's process and the benchmark's: `coins` pump coins on
 * their curves at different prices, and `citizens` wallets holding three of them each.
 */
export function leaderboardWorld(citizens: number, coinCount: number, seed: string): { coins: SeededCoin[]; wallets: SeededWallet[] } {
  const coins: SeededCoin[] = Array.from({ length: coinCount }, (_, i) => ({
    mint: key(`${seed} coin ${i}`),
    decimals: 6,
    programId: TOKEN_2022_PROGRAM_ID,
    curveLamports: 30_000_000_000n + BigInt(i) * 1_500_000_000n,
  }));
  const stride = Math.max(1, Math.floor(coinCount / HELD));
  const wallets: SeededWallet[] = Array.from({ length: citizens }, (_, i) => ({
    owner: key(`${seed} wallet ${i}`),
    lamports: 10_000_000n + BigInt((i * 7919) % 100_000) * 100_000n,
    tokens: Array.from({ length: HELD }, (_, k) => ({
      mint: coins[(i + k * stride) % coinCount]!.mint,
      programId: TOKEN_2022_PROGRAM_ID,
      raw: BigInt(1 + ((i * 31 + k * 17) % 5_000)) * 1_000_000_000n,
    })),
  }));
  return { coins, wallets };
}
