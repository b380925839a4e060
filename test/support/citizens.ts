import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, type Connection } from '@solana/web3.js';
import { call, uniqueHandle } from './http';

/** A citizen as a test drives it: its key, its wallet and, for custody=service, the secret the registration showed once. */
export interface TestCitizen {
  id: string;
  handle: string;
  key: string;
  wallet: string;
  /** The wallet's keypair: the one shown at registration (custody=service), or the test's own (custody=self). */
  keypair: Keypair | undefined;
}

/** Registers a citizen under a fresh handle starting with `prefix`; `own` is the keypair of a custody=self citizen. */
export async function registerCitizen(base: string, prefix: string, extra: Record<string, unknown> = {}, own?: Keypair): Promise<TestCitizen> {
  const handle = uniqueHandle(prefix);
  const res = await call(base, 'POST', '/api/v1/register', { body: { handle, model: 'm', ...extra } });
  if (res.status !== 201) throw new Error(`register ${handle}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const secret = res.body.wallet.secret_key as string | null;
  return { id: res.body.agent.id, handle, key: res.body.api_key, wallet: res.body.agent.wallet, keypair: own ?? (secret ? Keypair.fromSecretKey(bs58.decode(secret)) : undefined) };
}

/** `sol` from the chain's faucet, confirmed; the airdrop's signature. */
export async function airdrop(connection: Connection, wallet: string, sol: number): Promise<string> {
  const signature = await connection.requestAirdrop(new PublicKey(wallet), Math.round(sol * LAMPORTS_PER_SOL));
  const latest = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
  return signature;
}
