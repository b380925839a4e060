import { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PUMP_AMM_PROGRAM_ID, PUMP_FEE_PROGRAM_ID, PUMP_PROGRAM_ID } from '@pump-fun/pump-sdk';
import {
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  type AccountInfo,
  type AddressLookupTableAccount,
  type Connection,
  type TransactionInstruction,
  type VersionedTransaction,
} from '@solana/web3.js';
import { ChainError } from '../errors';
import type { AggregatorQuote } from './aggregator';

/** Jupiter's swap program (v6), the aggregator's own. */
export const JUPITER_PROGRAM_ID = new PublicKey('JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4');

/** The programs an aggregator's swap may call: what a swap through the pump venues or Jupiter needs, nothing else. */
export const AGGREGATOR_PROGRAMS: readonly PublicKey[] = [
  SystemProgram.programId,
  TOKEN_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ComputeBudgetProgram.programId,
  PUMP_PROGRAM_ID,
  PUMP_AMM_PROGRAM_ID,
  PUMP_FEE_PROGRAM_ID,
  JUPITER_PROGRAM_ID,
];

/** What a swap built by someone else must do to the caller's wallet, and no more. */
export interface SwapExpectation {
  user: PublicKey;
  quote: AggregatorQuote;
  /** SOL the caller may spend beyond the quote on fees (network and priority); the rent of accounts the swap opens comes on top. */
  feeLamports: bigint;
}

// Token and Token-2022 instructions that give someone else a hold on an account: Approve, SetAuthority, ApproveChecked.
const TOKEN_HANDING_OVER = new Set([4, 6, 13]);
// System instructions that change an account's owner program: Assign, AssignWithSeed.
const SYSTEM_REASSIGNING = new Set([1, 10]);
const TOKEN_ACCOUNT_BYTES = 165;

/** The rent-exempt minimum of an account of `bytes` of data (the runtime's default rent: 3,480 lamports a byte-year, two years). */
function rentExempt(bytes: number): bigint {
  return BigInt((128 + bytes) * 3_480 * 2);
}

const refuse = (reason: string, logs: string[] = []) =>
  new ChainError('aggregator_rejected', `the aggregator's transaction was refused before signing: ${reason}; nothing was signed or sent`, logs);

/**
 * Checks a transaction the aggregator built before it is signed: its programs are on the allowlist, no instruction
 * approves a delegate or changes an owner for the caller, and a simulation moves the caller's SOL and tokens as the
 * quote says, within its slippage. Throws `aggregator_rejected` otherwise.
 */
export async function checkAggregatorTransaction(
  connection: Connection,
  transaction: VersionedTransaction,
  instructions: readonly TransactionInstruction[],
  lookupTables: readonly AddressLookupTableAccount[],
  expected: SwapExpectation,
): Promise<void> {
  checkInstructions(instructions, expected.user);
  const keys = transaction.message.getAccountKeys({ addressLookupTableAccounts: [...lookupTables] });
  const writable: PublicKey[] = [];
  for (let i = 0; i < keys.length; i++) if (transaction.message.isAccountWritable(i)) writable.push(keys.get(i)!);
  const before = await connection.getMultipleAccountsInfo(writable, 'confirmed');
  const simulated = await connection.simulateTransaction(transaction, {
    sigVerify: false,
    replaceRecentBlockhash: true,
    commitment: 'confirmed',
    accounts: { encoding: 'base64', addresses: writable.map((key) => key.toBase58()) },
  });
  const { err, logs, accounts } = simulated.value;
  if (err || !accounts) throw refuse(`it fails in simulation (${JSON.stringify(err)})`, logs ?? []);
  const after = accounts.map((account) => (account ? { ...account, owner: new PublicKey(account.owner), data: Buffer.from(account.data[0]!, 'base64') } : null));
  checkBalances(writable, before, after, expected);
}

function checkInstructions(instructions: readonly TransactionInstruction[], user: PublicKey): void {
  for (const ix of instructions) {
    if (!AGGREGATOR_PROGRAMS.some((program) => program.equals(ix.programId))) throw refuse(`it calls program ${ix.programId.toBase58()}, which is not on the allowlist`);
    const names = ix.keys.some((key) => key.pubkey.equals(user));
    if (!names) continue;
    const isToken = ix.programId.equals(TOKEN_PROGRAM_ID) || ix.programId.equals(TOKEN_2022_PROGRAM_ID);
    if (isToken && TOKEN_HANDING_OVER.has(ix.data[0]!)) throw refuse('it approves a delegate or changes an authority on your token account');
    if (ix.programId.equals(SystemProgram.programId) && ix.data.length >= 4 && SYSTEM_REASSIGNING.has(ix.data.readUInt32LE(0))) {
      throw refuse('it changes the owner program of your wallet');
    }
  }
}

interface TokenAccount {
  mint: string;
  owner: PublicKey;
  amount: bigint;
  delegated: boolean;
}

function tokenAccount(info: Pick<AccountInfo<Buffer>, 'owner' | 'data'> | null): TokenAccount | undefined {
  if (!info || info.data.length < TOKEN_ACCOUNT_BYTES) return undefined;
  if (!info.owner.equals(TOKEN_PROGRAM_ID) && !info.owner.equals(TOKEN_2022_PROGRAM_ID)) return undefined;
  const data = info.data;
  return { mint: new PublicKey(data.subarray(0, 32)).toBase58(), owner: new PublicKey(data.subarray(32, 64)), amount: data.readBigUInt64LE(64), delegated: data.readUInt32LE(72) !== 0 };
}

type Account = Pick<AccountInfo<Buffer>, 'owner' | 'data' | 'lamports'> | null;

function checkBalances(writable: PublicKey[], before: readonly Account[], after: readonly Account[], expected: SwapExpectation): void {
  const { user, quote } = expected;
  const native = NATIVE_MINT.toBase58();
  let lamports = 0n;
  // What opening accounts may cost: their rent, no more (a swap opens the caller's token accounts).
  let rent = 0n;
  const tokens = new Map<string, bigint>();
  writable.forEach((key, i) => {
    const [pre, post] = [before[i] ?? null, after[i] ?? null];
    if (!pre && post) rent += rentExempt(post.data.length);
    if (key.equals(user)) {
      if (post && !post.owner.equals(SystemProgram.programId)) throw refuse('it changes the owner program of your wallet');
      lamports += BigInt(post?.lamports ?? 0) - BigInt(pre?.lamports ?? 0);
      return;
    }
    const [was, is] = [tokenAccount(pre), tokenAccount(post)];
    const yours = (was && was.owner.equals(user)) || (is && is.owner.equals(user));
    if (!yours) return;
    if (was?.owner.equals(user) && is && !is.owner.equals(user)) throw refuse('it hands one of your token accounts to another owner');
    if (is?.delegated && !was?.delegated) throw refuse('it approves a delegate on one of your token accounts');
    const mint = (is ?? was)!.mint;
    const delta = (is?.amount ?? 0n) - (was?.amount ?? 0n);
    // Wrapped SOL is SOL: what the swap wraps and unwraps nets out in the wallet.
    if (mint === native) lamports += BigInt(post?.lamports ?? 0) - BigInt(pre?.lamports ?? 0);
    else tokens.set(mint, (tokens.get(mint) ?? 0n) + delta);
  });
  const inAmount = BigInt(quote.inAmount);
  const minOut = BigInt(quote.otherAmountThreshold);
  for (const [mint, delta] of tokens) {
    if (mint === quote.inputMint && -delta > inAmount) throw refuse(`it takes ${-delta} of ${mint} where the quote says ${inAmount}`);
    if (mint !== quote.inputMint && mint !== quote.outputMint && delta < 0n) throw refuse(`it takes ${-delta} of ${mint}, which the quote does not trade`);
  }
  if (quote.outputMint !== native && (tokens.get(quote.outputMint) ?? 0n) < minOut) {
    throw refuse(`it delivers ${tokens.get(quote.outputMint) ?? 0n} of ${quote.outputMint} where the quote promises at least ${minOut}`);
  }
  const spendable = (quote.inputMint === native ? inAmount : 0n) + expected.feeLamports + rent;
  const owed = quote.outputMint === native ? minOut : 0n;
  if (lamports < owed - spendable) throw refuse(`it moves ${lamports} lamports of your SOL where the quote allows at least ${owed - spendable}`);
}
