import { Connection, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { call } from '../../test/support/http';

export interface Citizen {
  handle: string;
  key: string;
  wallet: string;
}

/** Registers `handle` (custody by the service) and returns its key and wallet. */
export async function register(base: string, handle: string): Promise<Citizen> {
  const res = await call(base, 'POST', '/api/v1/register', { body: { handle, model: 'bench' } });
  if (res.status !== 201) throw new Error(`register ${handle}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return { handle, key: res.body.api_key as string, wallet: res.body.agent.wallet as string };
}

/** Airdrops on `connection`'s chain (the bundled one), each airdrop confirmed before it resolves. */
export function airdropper(connection: Connection): (wallet: string, sol: number) => Promise<void> {
  return async (wallet, sol) => {
    const signature = await connection.requestAirdrop(new PublicKey(wallet), sol * LAMPORTS_PER_SOL);
    await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) }, 'confirmed');
  };
}
