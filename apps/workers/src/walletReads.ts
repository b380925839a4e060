import { PublicKey, type Connection } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, AccountLayout } from '@solana/spl-token';
import { ACCOUNTS_PER_CALL, TOKEN_PROGRAMS, listAnswer, rawRpc } from '@svc/chain';
import type { FoundTokenAccount } from '@svc/marketdata';
import type { CitizenWallet } from '@svc/projections';

/** getMultipleAccounts calls in flight at once: a refresh of 10,000 citizens is a few hundred of them. */
const CALLS_AT_ONCE = 4;
/** Wallets scanned (getTokenAccountsByOwner, one call per token program) at once. */
const SCANS_AT_ONCE = 4;
const TOKEN_ACCOUNT_SIZE = AccountLayout.span;
/** A token account's mint, owner and amount: all a portfolio refresh reads of it. */
export const TOKEN_ACCOUNT_HEAD = 72;

/** What a portfolio refresh needs of an account: its lamports, its owner program and the head of its data. */
export interface AccountHead {
  lamports: number;
  owner: string;
  data: Buffer;
}

/** An account of a getMultipleAccounts reply as it arrives (base64, dataSlice). */
type RawAccount = { lamports: number; owner: string; data: [string, string] } | null;

/** Every token account of each wallet, under both token programs. */
export async function scanWallets(connection: Connection, citizens: CitizenWallet[]): Promise<FoundTokenAccount[]> {
  const found: FoundTokenAccount[] = [];
  let next = 0;
  const worker = async () => {
    while (next < citizens.length) {
      const citizen = citizens[next++]!;
      const owner = new PublicKey(citizen.wallet);
      for (const programId of TOKEN_PROGRAMS) {
        const { value } = await connection.getTokenAccountsByOwner(owner, { programId }, 'confirmed');
        for (const { pubkey, account } of value) {
          if (account.data.length < TOKEN_ACCOUNT_SIZE) continue;
          const mint = AccountLayout.decode(account.data.subarray(0, TOKEN_ACCOUNT_SIZE)).mint.toBase58();
          found.push({ agent_id: citizen.agent_id, account: pubkey.toBase58(), mint, token_program: programId.toBase58(), source: 'scan' });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SCANS_AT_ONCE, citizens.length) }, worker));
  return found;
}

/**
 * Accounts in order (their lamports, owner and first 72 bytes of data), 100 keys a call, a few calls at a time;
 * the slot is the lowest any call answered at. The request goes through the Connection's own transport, but its
 * reply is not handed to web3.js's parser: that validates every account field by field and, for the tens of
 * thousands of accounts a refresh reads, costs more CPU than the reads themselves.
 */
export async function readAccountHeads(connection: Connection, keys: string[], signal: AbortSignal): Promise<{ accounts: Array<AccountHead | null>; slot: number; calls: number }> {
  const accounts: Array<AccountHead | null> = new Array(keys.length).fill(null);
  const calls = Math.ceil(keys.length / ACCOUNTS_PER_CALL);
  const request = rawRpc(connection);
  let slot = Number.MAX_SAFE_INTEGER;
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      signal.throwIfAborted();
      const at = next++ * ACCOUNTS_PER_CALL;
      const batch = keys.slice(at, at + ACCOUNTS_PER_CALL);
      const reply = await request('getMultipleAccounts', [batch, { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: TOKEN_ACCOUNT_HEAD } }]);
      const answer = listAnswer('getMultipleAccounts', reply, batch.length, 'failed to get info about accounts');
      slot = Math.min(slot, answer.slot);
      (answer.value as RawAccount[]).forEach((info, i) => {
        if (info) accounts[at + i] = { lamports: info.lamports, owner: info.owner, data: Buffer.from(info.data[0], 'base64') };
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(CALLS_AT_ONCE, calls) }, worker));
  return { accounts, slot: calls > 0 ? slot : 0, calls };
}

/**
 * The owner's associated token account of `mint`, derived as spl-token derives it but not through
 * PublicKey.findProgramAddressSync, which the runtime makes remember the addresses trades derive: tens of
 * thousands of holdings derived once each would push those out.
 */
export function associatedTokenAddress(mint: PublicKey, owner: PublicKey, programId: PublicKey): string {
  const seeds = [owner.toBuffer(), programId.toBuffer(), mint.toBuffer()];
  for (let bump = 255; bump >= 0; bump--) {
    try {
      return PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], ASSOCIATED_TOKEN_PROGRAM_ID).toBase58();
    } catch {
      // On the curve: the next bump.
    }
  }
  throw new Error(`no associated token account address for ${owner.toBase58()} and ${mint.toBase58()}`);
}
