import bs58 from 'bs58';
import { PublicKey } from '@solana/web3.js';
import type { AccountState } from '../runtime/program';
import { decodeMint, decodeTokenAccount, tokenProgramName, uiTokenAmount } from '../chain/tokens';
import type { LocalChain } from '../chain/localChain';
import { RpcError } from './errors';

export type AccountEncoding = 'base64' | 'base58' | 'jsonParsed' | 'base64+zstd';
const U64_MAX = 18446744073709551615;

export interface EncodeOptions {
  encoding?: AccountEncoding;
  dataSlice?: { offset: number; length: number };
}

export function encodingOf(options: EncodeOptions | undefined, fallback: AccountEncoding = 'base64'): AccountEncoding {
  const encoding = options?.encoding ?? fallback;
  if (!['base64', 'base58', 'jsonParsed'].includes(encoding)) throw RpcError.invalidParams(`Invalid param: unsupported encoding ${String(encoding)}`);
  return encoding;
}

/** An account as the RPC returns it; jsonParsed falls back to base64 for accounts no parser knows. */
export function encodeAccount(chain: LocalChain, account: AccountState, options: EncodeOptions | undefined, fallback: AccountEncoding = 'base64') {
  const encoding = encodingOf(options, fallback);
  let data: unknown;
  const slice = options?.dataSlice ? account.data.subarray(options.dataSlice.offset, options.dataSlice.offset + options.dataSlice.length) : account.data;
  if (encoding === 'jsonParsed') data = parseAccount(chain, account) ?? [account.data.toString('base64'), 'base64'];
  else if (encoding === 'base58') data = [bs58.encode(slice), 'base58'];
  else data = [Buffer.from(slice).toString('base64'), 'base64'];
  return {
    data,
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: account.owner.toBase58(),
    rentEpoch: U64_MAX,
    space: account.data.length,
  };
}

function parseAccount(chain: LocalChain, account: AccountState) {
  const token = decodeTokenAccount(account);
  if (token) {
    const mintAccount = chain.account(token.mint);
    const decimals = (mintAccount && decodeMint(mintAccount)?.decimals) ?? 0;
    const info: Record<string, unknown> = {
      isNative: token.isNative !== null,
      mint: token.mint.toBase58(),
      owner: token.owner.toBase58(),
      state: token.state,
      tokenAmount: uiTokenAmount(token.amount, decimals),
    };
    if (token.delegate) {
      info.delegate = token.delegate.toBase58();
      info.delegatedAmount = uiTokenAmount(token.delegatedAmount, decimals);
    }
    if (token.isNative !== null) info.rentExemptReserve = uiTokenAmount(token.isNative, 9);
    if (token.closeAuthority) info.closeAuthority = token.closeAuthority.toBase58();
    return { parsed: { info, type: 'account' }, program: tokenProgramName(account.owner), space: account.data.length };
  }
  const mint = decodeMint(account);
  if (mint) {
    return {
      parsed: {
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority?.toBase58() ?? null,
          isInitialized: mint.isInitialized,
          mintAuthority: mint.mintAuthority?.toBase58() ?? null,
          supply: mint.supply.toString(),
        },
        type: 'mint',
      },
      program: tokenProgramName(account.owner),
      space: account.data.length,
    };
  }
  return null;
}

export function parsePubkey(value: unknown): PublicKey {
  if (typeof value !== 'string') throw RpcError.invalidParams('Invalid param: Invalid');
  try {
    const key = new PublicKey(value);
    if (key.toBase58() !== value) throw new Error('not canonical');
    return key;
  } catch {
    throw RpcError.invalidParams('Invalid param: WrongSize');
  }
}

export function decodeWire(value: unknown, encoding: unknown): Buffer {
  if (typeof value !== 'string') throw RpcError.invalidParams('Invalid params: invalid type: expected a string');
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw RpcError.invalidParams(`invalid base64 encoding: ${value.slice(0, 32)}`);
    return Buffer.from(value, 'base64');
  }
  if (encoding === undefined || encoding === 'base58') {
    try {
      return Buffer.from(bs58.decode(value));
    } catch {
      throw RpcError.invalidParams(`invalid base58 encoding: ${value.slice(0, 32)}`);
    }
  }
  throw RpcError.invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected \`base58\` or \`base64\``);
}
