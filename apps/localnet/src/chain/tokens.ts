import { PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { AccountState } from '../runtime/program';

export const TOKEN_ACCOUNT_SIZE = 165;
export const MINT_SIZE = 82;
const TOKEN_2022_ACCOUNT_TYPE_OFFSET = 165;

export function isTokenProgram(owner: PublicKey): boolean {
  return owner.equals(TOKEN_PROGRAM_ID) || owner.equals(TOKEN_2022_PROGRAM_ID);
}

export interface TokenAccountView {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  delegate: PublicKey | null;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: PublicKey | null;
}

export interface MintView {
  mintAuthority: PublicKey | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: PublicKey | null;
}

/** A token account of either token program; a Token-2022 mint is excluded by its account-type byte. */
export function decodeTokenAccount(account: AccountState): TokenAccountView | null {
  if (!isTokenProgram(account.owner) || account.data.length < TOKEN_ACCOUNT_SIZE) return null;
  const d = account.data;
  if (d.length > TOKEN_ACCOUNT_SIZE && d[TOKEN_2022_ACCOUNT_TYPE_OFFSET] !== 2) return null;
  const state = d[108];
  if (state === 0) return null;
  return {
    mint: new PublicKey(d.subarray(0, 32)),
    owner: new PublicKey(d.subarray(32, 64)),
    amount: d.readBigUInt64LE(64),
    delegate: d.readUInt32LE(72) === 1 ? new PublicKey(d.subarray(76, 108)) : null,
    state: state === 2 ? 'frozen' : 'initialized',
    isNative: d.readUInt32LE(109) === 1 ? d.readBigUInt64LE(113) : null,
    delegatedAmount: d.readBigUInt64LE(121),
    closeAuthority: d.readUInt32LE(129) === 1 ? new PublicKey(d.subarray(133, 165)) : null,
  };
}

export function decodeMint(account: AccountState): MintView | null {
  if (!isTokenProgram(account.owner) || account.data.length < MINT_SIZE) return null;
  const d = account.data;
  if (d.length === TOKEN_ACCOUNT_SIZE) return null;
  if (d.length > TOKEN_ACCOUNT_SIZE && d[TOKEN_2022_ACCOUNT_TYPE_OFFSET] !== 1) return null;
  return {
    mintAuthority: d.readUInt32LE(0) === 1 ? new PublicKey(d.subarray(4, 36)) : null,
    supply: d.readBigUInt64LE(36),
    decimals: d[44],
    isInitialized: d[45] === 1,
    freezeAuthority: d.readUInt32LE(46) === 1 ? new PublicKey(d.subarray(50, 82)) : null,
  };
}

export function uiTokenAmount(amount: bigint, decimals: number) {
  const uiAmountString = formatUnits(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function formatUnits(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, -decimals);
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

export function tokenProgramName(owner: PublicKey): 'spl-token' | 'spl-token-2022' {
  return owner.equals(TOKEN_2022_PROGRAM_ID) ? 'spl-token-2022' : 'spl-token';
}
