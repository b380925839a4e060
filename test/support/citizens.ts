import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, type ConfirmedSignatureInfo, type Connection, type VersionedTransactionResponse } from '@solana/web3.js';
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

/** `count` citizens, registered one after another, so their entries stand in the ledger in that order. */
export async function registerCitizens(base: string, count: number, prefix: string): Promise<TestCitizen[]> {
  const citizens: TestCitizen[] = [];
  for (let i = 0; i < count; i += 1) citizens.push(await registerCitizen(base, prefix));
  return citizens;
}

/** `sol` from the chain's faucet, confirmed; the airdrop's signature. */
export async function airdrop(connection: Connection, wallet: string, sol: number): Promise<string> {
  const signature = await connection.requestAirdrop(new PublicKey(wallet), Math.round(sol * LAMPORTS_PER_SOL));
  const latest = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
  return signature;
}

/** Every confirmed transaction that names `wallet`, newest first, paged through getSignaturesForAddress. */
async function signaturesOf(connection: Connection, wallet: string): Promise<ConfirmedSignatureInfo[]> {
  const all: ConfirmedSignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await connection.getSignaturesForAddress(new PublicKey(wallet), { before, limit: 1000 }, 'confirmed');
    all.push(...page);
    if (page.length < 1000) return all;
    before = page.at(-1)!.signature;
  }
}

const transaction = async (connection: Connection, signature: string): Promise<VersionedTransactionResponse> =>
  (await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;

/** Signatures of the transactions `wallet` paid for that succeeded: what it spent, as the chain sees it, newest first. */
export async function spendsOf(connection: Connection, wallet: string): Promise<string[]> {
  const out: string[] = [];
  for (const { signature, err } of await signaturesOf(connection, wallet)) {
    if (err) continue;
    const payer = (await transaction(connection, signature)).transaction.message.staticAccountKeys[0]!.toBase58();
    if (payer === wallet) out.push(signature);
  }
  return out;
}

/** Signatures of the transactions after which `wallet` held fewer lamports, failed ones too (they cost the fee), newest first. */
export async function outflowsOf(connection: Connection, wallet: string): Promise<string[]> {
  const out: string[] = [];
  for (const { signature } of await signaturesOf(connection, wallet)) {
    const tx = await transaction(connection, signature);
    const index = tx.transaction.message.staticAccountKeys.findIndex((k) => k.toBase58() === wallet);
    if (tx.meta!.postBalances[index]! < tx.meta!.preBalances[index]!) out.push(signature);
  }
  return out;
}
