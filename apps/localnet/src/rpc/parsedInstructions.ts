import bs58 from 'bs58';
import { SystemProgram } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';

/**
 * jsonParsed instructions: the System and SPL Token instructions agents read most (transfers, account
 * creation) in the RPC's parsed shape, everything else partially decoded (programId, accounts, data).
 */
export function parsedInstruction(keys: readonly string[], programIdIndex: number, accounts: readonly number[], data: Buffer, stackHeight: number | null) {
  const programId = keys[programIdIndex];
  const account = (i: number) => keys[accounts[i]];
  const parsed = parse(programId, account, data, accounts.length);
  if (parsed) return { ...parsed, programId, stackHeight };
  return { programId, accounts: accounts.map((i) => keys[i]), data: bs58.encode(data), stackHeight };
}

function parse(programId: string, account: (i: number) => string, data: Buffer, count: number) {
  try {
    if (programId === SystemProgram.programId.toBase58()) {
      const kind = data.readUInt32LE(0);
      if (kind === 2 && count >= 2) return { program: 'system', parsed: { type: 'transfer', info: { source: account(0), destination: account(1), lamports: Number(data.readBigUInt64LE(4)) } } };
      if (kind === 0 && count >= 2) {
        return {
          program: 'system',
          parsed: {
            type: 'createAccount',
            info: { source: account(0), newAccount: account(1), lamports: Number(data.readBigUInt64LE(4)), space: Number(data.readBigUInt64LE(12)), owner: bs58.encode(data.subarray(20, 52)) },
          },
        };
      }
    }
    const token = programId === TOKEN_PROGRAM_ID.toBase58() ? 'spl-token' : programId === TOKEN_2022_PROGRAM_ID.toBase58() ? 'spl-token' : null;
    if (token) {
      if (data[0] === 3 && count >= 3) return { program: token, parsed: { type: 'transfer', info: { source: account(0), destination: account(1), authority: account(2), amount: data.readBigUInt64LE(1).toString() } } };
      if (data[0] === 12 && count >= 4) {
        const amount = data.readBigUInt64LE(1);
        const decimals = data[9];
        return {
          program: token,
          parsed: {
            type: 'transferChecked',
            info: { source: account(0), mint: account(1), destination: account(2), authority: account(3), tokenAmount: tokenAmount(amount, decimals) },
          },
        };
      }
    }
  } catch {
    return null; // short or odd data: fall back to the partially decoded form, as the RPC does
  }
  return null;
}

function tokenAmount(amount: bigint, decimals: number) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const uiAmountString = decimals === 0 ? s : `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '');
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}
