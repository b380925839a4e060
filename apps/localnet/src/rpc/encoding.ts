import bs58 from 'bs58';
import { PublicKey } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  ExtensionType,
  TOKEN_2022_PROGRAM_ID,
  getCpiGuard,
  getDefaultAccountState,
  getExtensionData,
  getGroupMemberPointerState,
  getGroupPointerState,
  getInterestBearingMintConfigState,
  getMemoTransfer,
  getMetadataPointerState,
  getMintCloseAuthority,
  getPausableConfig,
  getPermanentDelegate,
  getScaledUiAmountConfig,
  getTokenGroupMemberState,
  getTokenGroupState,
  getTransferFeeAmount,
  getTransferFeeConfig,
  getTransferHook,
  getTransferHookAccount,
  unpackAccount,
  unpackMint,
  type Account,
  type Mint,
} from '@solana/spl-token';
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
    const extensions = token2022Extensions(account, 'account');
    if (extensions.length) info.extensions = extensions;
    return { parsed: { info, type: 'account' }, program: tokenProgramName(account.owner), space: account.data.length };
  }
  const mint = decodeMint(account);
  if (mint) {
    const info: Record<string, unknown> = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority?.toBase58() ?? null,
      isInitialized: mint.isInitialized,
      mintAuthority: mint.mintAuthority?.toBase58() ?? null,
      supply: mint.supply.toString(),
    };
    const extensions = token2022Extensions(account, 'mint');
    if (extensions.length) info.extensions = extensions;
    return {
      parsed: { info, type: 'mint' },
      program: tokenProgramName(account.owner),
      space: account.data.length,
    };
  }
  return null;
}

type UiExtension = { extension: string; state?: Record<string, unknown> };
const UNPARSEABLE: UiExtension = { extension: 'unparseableExtension' };
const ACCOUNT_STATES = ['uninitialized', 'initialized', 'frozen'];

/**
 * The `extensions` of a Token-2022 mint or account in agave's account-decoder shape (`UiExtension`, serde
 * adjacently tagged as `{ extension, state }`). Agave omits the field when the list is empty, so a base-size
 * Token-2022 account and every legacy SPL Token account come back without it.
 */
function token2022Extensions(account: AccountState, kind: 'mint' | 'account'): UiExtension[] {
  if (!account.owner.equals(TOKEN_2022_PROGRAM_ID) || account.data.length <= ACCOUNT_SIZE) return [];
  const info = { data: account.data, owner: account.owner, lamports: Number(account.lamports), executable: account.executable };
  let state: Mint | Account;
  try {
    state = kind === 'mint' ? unpackMint(PublicKey.default, info, TOKEN_2022_PROGRAM_ID) : unpackAccount(PublicKey.default, info, TOKEN_2022_PROGRAM_ID);
  } catch {
    return [];
  }
  const types = extensionTypes(state.tlvData);
  if (!types) return [];
  return types.map((type) => {
    try {
      return uiExtension(type, state) ?? UNPARSEABLE;
    } catch {
      return UNPARSEABLE;
    }
  });
}

/** Highest ExtensionType agave's spl-token-2022 knows (PermissionedBurn). */
const MAX_EXTENSION_TYPE = 28;

/**
 * The TLV entries' types as spl-token-2022's `get_extension_types` walks them: it stops at the first
 * Uninitialized type (realloc padding), and an id it does not know fails the whole walk, which agave turns
 * into an empty list. spl-token's `getExtensionTypes` reports the padding as extensions instead.
 */
function extensionTypes(tlv: Buffer): number[] | null {
  const types: number[] = [];
  let at = 0;
  while (at + 2 <= tlv.length) {
    const type = tlv.readUInt16LE(at);
    if (type === ExtensionType.Uninitialized) break;
    if (at + 4 > tlv.length || type > MAX_EXTENSION_TYPE) return null;
    types.push(type);
    at += 4 + tlv.readUInt16LE(at + 2);
  }
  return types;
}

const key = (k: PublicKey | null | undefined): string | null => (k && !k.equals(PublicKey.default) ? k.toBase58() : null);

function uiExtension(type: number, state: Mint | Account): UiExtension | null {
  const mint = state as Mint;
  const account = state as Account;
  const unit = (extension: string): UiExtension => ({ extension });
  const some = <T>(value: T | null, extension: string, convert: (v: T) => Record<string, unknown>): UiExtension | null => (value ? { extension, state: convert(value) } : null);
  switch (type) {
    case ExtensionType.TransferFeeConfig:
      return some(getTransferFeeConfig(mint), 'transferFeeConfig', (c) => ({
        transferFeeConfigAuthority: key(c.transferFeeConfigAuthority),
        withdrawWithheldAuthority: key(c.withdrawWithheldAuthority),
        withheldAmount: Number(c.withheldAmount),
        olderTransferFee: transferFee(c.olderTransferFee),
        newerTransferFee: transferFee(c.newerTransferFee),
      }));
    case ExtensionType.TransferFeeAmount:
      return some(getTransferFeeAmount(account), 'transferFeeAmount', (a) => ({ withheldAmount: Number(a.withheldAmount) }));
    case ExtensionType.MintCloseAuthority:
      return some(getMintCloseAuthority(mint), 'mintCloseAuthority', (m) => ({ closeAuthority: key(m.closeAuthority) }));
    case ExtensionType.DefaultAccountState:
      return some(getDefaultAccountState(mint), 'defaultAccountState', (d) => ({ accountState: ACCOUNT_STATES[d.state] ?? 'uninitialized' }));
    case ExtensionType.ImmutableOwner:
      return unit('immutableOwner');
    case ExtensionType.MemoTransfer:
      return some(getMemoTransfer(account), 'memoTransfer', (m) => ({ requireIncomingTransferMemos: m.requireIncomingTransferMemos }));
    case ExtensionType.NonTransferable:
      return unit('nonTransferable');
    case ExtensionType.InterestBearingConfig:
      return some(getInterestBearingMintConfigState(mint), 'interestBearingConfig', (c) => ({
        rateAuthority: key(c.rateAuthority),
        initializationTimestamp: Number(c.initializationTimestamp),
        preUpdateAverageRate: c.preUpdateAverageRate,
        lastUpdateTimestamp: Number(c.lastUpdateTimestamp),
        currentRate: c.currentRate,
      }));
    case ExtensionType.CpiGuard:
      return some(getCpiGuard(account), 'cpiGuard', (c) => ({ lockCpi: c.lockCpi }));
    case ExtensionType.PermanentDelegate:
      return some(getPermanentDelegate(mint), 'permanentDelegate', (p) => ({ delegate: key(p.delegate) }));
    case ExtensionType.NonTransferableAccount:
      return unit('nonTransferableAccount');
    case ExtensionType.TransferHook:
      return some(getTransferHook(mint), 'transferHook', (h) => ({ authority: key(h.authority), programId: key(h.programId) }));
    case ExtensionType.TransferHookAccount:
      return some(getTransferHookAccount(account), 'transferHookAccount', (h) => ({ transferring: h.transferring }));
    case ExtensionType.MetadataPointer:
      return some(getMetadataPointerState(mint), 'metadataPointer', (p) => ({ authority: key(p.authority), metadataAddress: key(p.metadataAddress) }));
    case ExtensionType.TokenMetadata:
      return some(getExtensionData(ExtensionType.TokenMetadata, mint.tlvData), 'tokenMetadata', tokenMetadata);
    case ExtensionType.GroupPointer:
      return some(getGroupPointerState(mint), 'groupPointer', (p) => ({ authority: key(p.authority), groupAddress: key(p.groupAddress) }));
    case ExtensionType.GroupMemberPointer:
      return some(getGroupMemberPointerState(mint), 'groupMemberPointer', (p) => ({ authority: key(p.authority), memberAddress: key(p.memberAddress) }));
    case ExtensionType.TokenGroup:
      return some(getTokenGroupState(mint), 'tokenGroup', (g) => ({
        updateAuthority: key(g.updateAuthority),
        mint: g.mint!.toBase58(),
        size: Number(g.size),
        maxSize: Number(g.maxSize),
      }));
    case ExtensionType.TokenGroupMember:
      return some(getTokenGroupMemberState(mint), 'tokenGroupMember', (m) => ({ mint: m.mint!.toBase58(), group: m.group!.toBase58(), memberNumber: Number(m.memberNumber) }));
    case ExtensionType.ScaledUiAmountConfig:
      return some(getScaledUiAmountConfig(mint), 'scaledUiAmountConfig', (c) => ({
        authority: key(c.authority),
        multiplier: String(c.multiplier),
        newMultiplierEffectiveTimestamp: Number(c.newMultiplierEffectiveTimestamp),
        newMultiplier: String(c.newMultiplier),
      }));
    case ExtensionType.PausableConfig:
      return some(getPausableConfig(mint), 'pausableConfig', (c) => ({ authority: key(c.authority), paused: c.paused }));
    case ExtensionType.PausableAccount:
      return unit('pausableAccount');
    default:
      // Confidential transfer/mint-burn state (ElGamal ciphertexts) and newer extensions are not decoded here.
      return null;
  }
}

const transferFee = (fee: { epoch: bigint; maximumFee: bigint; transferFeeBasisPoints: number }) => ({
  epoch: Number(fee.epoch),
  maximumFee: Number(fee.maximumFee),
  transferFeeBasisPoints: fee.transferFeeBasisPoints,
});

/**
 * TokenMetadata's borsh layout, decoded by hand: spl-token-metadata's `unpack` drops NUL characters from the
 * strings, while agave returns them as stored, and a string that is not UTF-8 makes the extension unparseable.
 */
function tokenMetadata(data: Buffer): Record<string, unknown> {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let at = 64;
  const string = () => {
    const length = data.readUInt32LE(at);
    if (at + 4 + length > data.length) throw new RangeError('string past the end of the TokenMetadata entry');
    const s = utf8.decode(data.subarray(at + 4, at + 4 + length));
    at += 4 + length;
    return s;
  };
  const updateAuthority = key(new PublicKey(data.subarray(0, 32)));
  const mint = new PublicKey(data.subarray(32, 64)).toBase58();
  const name = string();
  const symbol = string();
  const uri = string();
  const count = data.readUInt32LE(at);
  at += 4;
  const additionalMetadata: [string, string][] = [];
  for (let i = 0; i < count; i++) additionalMetadata.push([string(), string()]);
  if (at !== data.length) throw new RangeError('trailing bytes after TokenMetadata');
  return { updateAuthority, mint, name, symbol, uri, additionalMetadata };
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
