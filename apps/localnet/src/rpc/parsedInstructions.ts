import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { PublicKey, SystemProgram } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { uiTokenAmount } from '../chain/tokens';

/**
 * jsonParsed instructions in agave's `parse_instruction` shapes for the System, SPL Token (both token programs,
 * which agave reports alike as `spl-token`), Associated Token Account and Memo programs; anything else, and
 * anything these parsers refuse, partially decoded (programId, accounts, data) as the RPC does.
 */
export function parsedInstruction(keys: readonly string[], programIdIndex: number, accounts: readonly number[], data: Buffer, stackHeight: number | null) {
  const programId = keys[programIdIndex];
  const parsed = parse(programId, new Ix(keys, accounts, data));
  if (parsed) return { program: parsed.program, programId, parsed: parsed.parsed, stackHeight };
  return { programId, accounts: accounts.map((i) => keys[i]), data: bs58.encode(data), stackHeight };
}

type Info = Record<string, unknown>;
interface Parsed {
  program: string;
  parsed: { type: string; info?: Info } | string;
}

const SYSTEM = SystemProgram.programId.toBase58();
const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);
const ASSOCIATED_TOKEN = ASSOCIATED_TOKEN_PROGRAM_ID.toBase58();
const MEMO_PROGRAMS = new Set(['Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo', 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr']);

function parse(programId: string, ix: Ix): Parsed | null {
  try {
    if (MEMO_PROGRAMS.has(programId)) return { program: 'spl-memo', parsed: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(ix.data) };
    // agave refuses these programs' instructions when they name no account or an account past the key list.
    if (!ix.accountsInRange()) return null;
    if (programId === SYSTEM) return wrap('system', parseSystem(ix));
    if (TOKEN_PROGRAMS.has(programId)) return wrap('spl-token', parseTokenInstruction(ix));
    if (programId === ASSOCIATED_TOKEN) return wrap('spl-associated-token-account', parseAssociatedToken(ix));
  } catch {
    // Short or odd data: the RPC falls back to the partially decoded form.
  }
  return null;
}

/**
 * Like agave: data that does not decode as a token instruction may still be a token-metadata one, but an
 * instruction that decodes and lacks accounts is refused outright.
 */
function parseTokenInstruction(ix: Ix): { type: string; info: Info } | null {
  try {
    const token = parseToken(ix);
    if (token) return token;
  } catch (e) {
    if (e instanceof MissingAccount) return null;
  }
  return parseTokenMetadata(ix);
}

class MissingAccount extends RangeError {}

const wrap = (program: string, parsed: { type: string; info?: Info } | null): Parsed | null => (parsed ? { program, parsed } : null);

class Ix {
  private at = 0;
  constructor(
    private readonly keys: readonly string[],
    private readonly accounts: readonly number[],
    readonly data: Buffer,
  ) {}

  get count(): number {
    return this.accounts.length;
  }
  accountsInRange(): boolean {
    return this.accounts.length > 0 && Math.max(...this.accounts) < this.keys.length;
  }
  /** The instruction's `i`th account; agave's `check_num_accounts` refuses an instruction with fewer than `min`. */
  account(i: number): string {
    const key = this.keys[this.accounts[i]];
    if (key === undefined) throw new MissingAccount('missing account');
    return key;
  }
  need(min: number): void {
    if (this.accounts.length < min) throw new MissingAccount('too few accounts');
  }
  /** agave's `parse_signers`: one authority, or a multisig followed by its signers. */
  signers(info: Info, lastNonSigner: number, ownerField: string, multisigField: string): Info {
    if (this.accounts.length > lastNonSigner + 1) {
      info[multisigField] = this.account(lastNonSigner);
      info.signers = this.accounts.slice(lastNonSigner + 1).map((i) => this.keys[i]);
    } else if (this.accounts.length > lastNonSigner) {
      info[ownerField] = this.account(lastNonSigner);
    }
    return info;
  }

  seek(offset: number): this {
    this.at = offset;
    return this;
  }
  get remaining(): number {
    return this.data.length - this.at;
  }
  private take(n: number): Buffer {
    if (this.at + n > this.data.length) throw new RangeError('instruction data too short');
    const bytes = this.data.subarray(this.at, this.at + n);
    this.at += n;
    return bytes;
  }
  u8(): number {
    return this.take(1)[0];
  }
  u16(): number {
    return this.take(2).readUInt16LE(0);
  }
  u32(): number {
    return this.take(4).readUInt32LE(0);
  }
  u64(): bigint {
    return this.take(8).readBigUInt64LE(0);
  }
  pubkey(): string {
    return new PublicKey(this.take(32)).toBase58();
  }
  /** spl-token's COption<Pubkey> in instruction data: a 0/1 tag, then the key when 1. */
  optionPubkey(): string | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return this.pubkey();
    throw new RangeError('invalid option tag');
  }
  /** OptionalNonZeroPubkey: 32 bytes, all zero for none. */
  nonZeroPubkey(): string | null {
    const bytes = this.take(32);
    return bytes.every((b) => b === 0) ? null : new PublicKey(bytes).toBase58();
  }
  private utf8(n: number): string {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(this.take(n));
  }
  /** bincode String: u64 length. */
  bincodeString(): string {
    return this.utf8(Number(this.u64()));
  }
  /** borsh String: u32 length. */
  borshString(): string {
    return this.utf8(this.u32());
  }
  rest(): Buffer {
    return this.take(this.remaining);
  }
}

const num = (value: bigint) => Number(value);

function parseSystem(ix: Ix): { type: string; info: Info } | null {
  const kind = ix.seek(0).u32();
  const type = (t: string, min: number, info: () => Info) => {
    ix.need(min);
    return { type: t, info: info() };
  };
  switch (kind) {
    case 0: {
      const lamports = num(ix.u64());
      const space = num(ix.u64());
      const owner = ix.pubkey();
      return type('createAccount', 2, () => ({ source: ix.account(0), newAccount: ix.account(1), lamports, space, owner }));
    }
    case 1: {
      const owner = ix.pubkey();
      return type('assign', 1, () => ({ account: ix.account(0), owner }));
    }
    case 2: {
      const lamports = num(ix.u64());
      return type('transfer', 2, () => ({ source: ix.account(0), destination: ix.account(1), lamports }));
    }
    case 3: {
      const base = ix.pubkey();
      const seed = ix.bincodeString();
      const lamports = num(ix.u64());
      const space = num(ix.u64());
      const owner = ix.pubkey();
      return type('createAccountWithSeed', 2, () => ({ source: ix.account(0), newAccount: ix.account(1), base, seed, lamports, space, owner }));
    }
    case 4:
      return type('advanceNonce', 3, () => ({ nonceAccount: ix.account(0), recentBlockhashesSysvar: ix.account(1), nonceAuthority: ix.account(2) }));
    case 5: {
      const lamports = num(ix.u64());
      return type('withdrawFromNonce', 5, () => ({
        nonceAccount: ix.account(0),
        destination: ix.account(1),
        recentBlockhashesSysvar: ix.account(2),
        rentSysvar: ix.account(3),
        nonceAuthority: ix.account(4),
        lamports,
      }));
    }
    case 6: {
      const nonceAuthority = ix.pubkey();
      return type('initializeNonce', 3, () => ({ nonceAccount: ix.account(0), recentBlockhashesSysvar: ix.account(1), rentSysvar: ix.account(2), nonceAuthority }));
    }
    case 7: {
      const newAuthorized = ix.pubkey();
      return type('authorizeNonce', 2, () => ({ nonceAccount: ix.account(0), nonceAuthority: ix.account(1), newAuthorized }));
    }
    case 8: {
      const space = num(ix.u64());
      return type('allocate', 1, () => ({ account: ix.account(0), space }));
    }
    case 9: {
      const base = ix.pubkey();
      const seed = ix.bincodeString();
      const space = num(ix.u64());
      const owner = ix.pubkey();
      return type('allocateWithSeed', 2, () => ({ account: ix.account(0), base, seed, space, owner }));
    }
    case 10: {
      const base = ix.pubkey();
      const seed = ix.bincodeString();
      const owner = ix.pubkey();
      return type('assignWithSeed', 2, () => ({ account: ix.account(0), base, seed, owner }));
    }
    case 11: {
      const lamports = num(ix.u64());
      const sourceSeed = ix.bincodeString();
      const sourceOwner = ix.pubkey();
      return type('transferWithSeed', 3, () => ({ source: ix.account(0), sourceBase: ix.account(1), destination: ix.account(2), lamports, sourceSeed, sourceOwner }));
    }
    case 12:
      return type('upgradeNonce', 1, () => ({ nonceAccount: ix.account(0) }));
    case 13: {
      const lamports = num(ix.u64());
      const space = num(ix.u64());
      const owner = ix.pubkey();
      if (lamports === 0) return type('createAccountAllowPrefund', 1, () => ({ newAccount: ix.account(0), space, owner }));
      return type('createAccountAllowPrefund', 2, () => ({ newAccount: ix.account(0), source: ix.account(1), lamports, space, owner }));
    }
    default:
      return null;
  }
}

const AUTHORITY_TYPES = [
  'mintTokens',
  'freezeAccount',
  'accountOwner',
  'closeAccount',
  'transferFeeConfig',
  'withheldWithdraw',
  'closeMint',
  'interestRate',
  'permanentDelegate',
  'confidentialTransferMint',
  'transferHookProgramId',
  'confidentialTransferFeeConfig',
  'metadataPointer',
  'groupPointer',
  'groupMemberPointer',
  'scaledUiAmount',
  'pause',
  'permissionedBurn',
];

/** agave's `UiExtensionType`, indexed by spl-token-2022's ExtensionType discriminant. */
const EXTENSION_TYPES = [
  'uninitialized',
  'transferFeeConfig',
  'transferFeeAmount',
  'mintCloseAuthority',
  'confidentialTransferMint',
  'confidentialTransferAccount',
  'defaultAccountState',
  'immutableOwner',
  'memoTransfer',
  'nonTransferable',
  'interestBearingConfig',
  'cpiGuard',
  'permanentDelegate',
  'nonTransferableAccount',
  'transferHook',
  'transferHookAccount',
  'confidentialTransferFeeConfig',
  'confidentialTransferFeeAmount',
  'metadataPointer',
  'tokenMetadata',
  'groupPointer',
  'tokenGroup',
  'groupMemberPointer',
  'tokenGroupMember',
  'confidentialMintBurn',
  'scaledUiAmount',
  'pausable',
  'pausableAccount',
  'permissionedBurn',
];

function parseToken(ix: Ix): { type: string; info: Info } | null {
  const tag = ix.seek(0).u8();
  const type = (t: string, min: number, info: () => Info) => {
    ix.need(min);
    return { type: t, info: info() };
  };
  const checked = () => {
    const amount = ix.u64();
    return uiTokenAmount(amount, ix.u8());
  };
  switch (tag) {
    case 0:
    case 20: {
      const decimals = ix.u8();
      const mintAuthority = ix.pubkey();
      const freezeAuthority = ix.optionPubkey();
      const freeze = freezeAuthority ? { freezeAuthority } : {};
      if (tag === 20) return type('initializeMint2', 1, () => ({ mint: ix.account(0), decimals, mintAuthority, ...freeze }));
      return type('initializeMint', 2, () => ({ mint: ix.account(0), decimals, mintAuthority, ...freeze, rentSysvar: ix.account(1) }));
    }
    case 1:
      return type('initializeAccount', 4, () => ({ account: ix.account(0), mint: ix.account(1), owner: ix.account(2), rentSysvar: ix.account(3) }));
    case 2: {
      const m = ix.u8();
      return type('initializeMultisig', 3, () => ({ multisig: ix.account(0), rentSysvar: ix.account(1), signers: signerList(ix, 2), m }));
    }
    case 3: {
      const amount = ix.u64().toString();
      return type('transfer', 3, () => ix.signers({ source: ix.account(0), destination: ix.account(1), amount }, 2, 'authority', 'multisigAuthority'));
    }
    case 4: {
      const amount = ix.u64().toString();
      return type('approve', 3, () => ix.signers({ source: ix.account(0), delegate: ix.account(1), amount }, 2, 'owner', 'multisigOwner'));
    }
    case 5:
      return type('revoke', 2, () => ix.signers({ source: ix.account(0) }, 1, 'owner', 'multisigOwner'));
    case 6: {
      const authorityType = AUTHORITY_TYPES[ix.u8()];
      if (!authorityType) return null;
      const newAuthority = ix.optionPubkey();
      const owned = authorityType === 'accountOwner' || authorityType === 'closeAccount' ? 'account' : 'mint';
      return type('setAuthority', 2, () => ix.signers({ [owned]: ix.account(0), authorityType, newAuthority }, 1, 'authority', 'multisigAuthority'));
    }
    case 7: {
      const amount = ix.u64().toString();
      return type('mintTo', 3, () => ix.signers({ mint: ix.account(0), account: ix.account(1), amount }, 2, 'mintAuthority', 'multisigMintAuthority'));
    }
    case 8: {
      const amount = ix.u64().toString();
      return type('burn', 3, () => ix.signers({ account: ix.account(0), mint: ix.account(1), amount }, 2, 'authority', 'multisigAuthority'));
    }
    case 9:
      return type('closeAccount', 3, () => ix.signers({ account: ix.account(0), destination: ix.account(1) }, 2, 'owner', 'multisigOwner'));
    case 10:
      return type('freezeAccount', 3, () => ix.signers({ account: ix.account(0), mint: ix.account(1) }, 2, 'freezeAuthority', 'multisigFreezeAuthority'));
    case 11:
      return type('thawAccount', 3, () => ix.signers({ account: ix.account(0), mint: ix.account(1) }, 2, 'freezeAuthority', 'multisigFreezeAuthority'));
    case 12: {
      const tokenAmount = checked();
      return type('transferChecked', 4, () =>
        ix.signers({ source: ix.account(0), mint: ix.account(1), destination: ix.account(2), tokenAmount }, 3, 'authority', 'multisigAuthority'),
      );
    }
    case 13: {
      const tokenAmount = checked();
      return type('approveChecked', 4, () => ix.signers({ source: ix.account(0), mint: ix.account(1), delegate: ix.account(2), tokenAmount }, 3, 'owner', 'multisigOwner'));
    }
    case 14: {
      const tokenAmount = checked();
      return type('mintToChecked', 3, () => ix.signers({ mint: ix.account(0), account: ix.account(1), tokenAmount }, 2, 'mintAuthority', 'multisigMintAuthority'));
    }
    case 15: {
      const tokenAmount = checked();
      return type('burnChecked', 3, () => ix.signers({ account: ix.account(0), mint: ix.account(1), tokenAmount }, 2, 'authority', 'multisigAuthority'));
    }
    case 16: {
      const owner = ix.pubkey();
      return type('initializeAccount2', 3, () => ({ account: ix.account(0), mint: ix.account(1), owner, rentSysvar: ix.account(2) }));
    }
    case 17:
      return type('syncNative', 1, () => ({ account: ix.account(0) }));
    case 18: {
      const owner = ix.pubkey();
      return type('initializeAccount3', 2, () => ({ account: ix.account(0), mint: ix.account(1), owner }));
    }
    case 19: {
      const m = ix.u8();
      return type('initializeMultisig2', 2, () => ({ multisig: ix.account(0), signers: signerList(ix, 1), m }));
    }
    case 21: {
      if (ix.remaining % 2 !== 0) return null;
      const extensionTypes: string[] = [];
      while (ix.remaining > 0) {
        const name = EXTENSION_TYPES[ix.u16()];
        if (!name) return null;
        extensionTypes.push(name);
      }
      return type('getAccountDataSize', 1, () => ({ mint: ix.account(0), ...(extensionTypes.length ? { extensionTypes } : {}) }));
    }
    case 22:
      return type('initializeImmutableOwner', 1, () => ({ account: ix.account(0) }));
    case 23: {
      const amount = ix.u64().toString();
      return type('amountToUiAmount', 1, () => ({ mint: ix.account(0), amount }));
    }
    case 24: {
      const uiAmount = new TextDecoder('utf-8', { fatal: true }).decode(ix.rest());
      return type('uiAmountToAmount', 1, () => ({ mint: ix.account(0), uiAmount }));
    }
    case 25: {
      const newAuthority = ix.optionPubkey();
      return type('initializeMintCloseAuthority', 1, () => ({ mint: ix.account(0), newAuthority }));
    }
    case 31:
      return type('createNativeMint', 3, () => ({ payer: ix.account(0), nativeMint: ix.account(1), systemProgram: ix.account(2) }));
    case 32:
      return type('initializeNonTransferableMint', 1, () => ({ mint: ix.account(0) }));
    case 35: {
      const delegate = ix.pubkey();
      return type('initializePermanentDelegate', 1, () => ({ mint: ix.account(0), delegate }));
    }
    case 38:
      return type('withdrawExcessLamports', 3, () => ix.signers({ source: ix.account(0), destination: ix.account(1) }, 2, 'authority', 'multisigAuthority'));
    case 39:
      return parsePointer(ix, 'MetadataPointer', 'metadataAddress');
    case 40:
      return parsePointer(ix, 'GroupPointer', 'groupAddress');
    case 41:
      return parsePointer(ix, 'GroupMemberPointer', 'memberAddress');
    default:
      return null;
  }
}

const signerList = (ix: Ix, from: number) => Array.from({ length: Math.max(0, ix.count - from) }, (_, i) => ix.account(from + i));

/** The metadata/group/member pointer extensions share one layout: initialize (authority, address) and update (address). */
function parsePointer(ix: Ix, name: string, addressField: string): { type: string; info: Info } | null {
  const sub = ix.u8();
  if (sub === 0 && ix.remaining === 64) {
    ix.need(1);
    const authority = ix.nonZeroPubkey();
    const address = ix.nonZeroPubkey();
    return { type: `initialize${name}`, info: { mint: ix.account(0), ...(authority ? { authority } : {}), ...(address ? { [addressField]: address } : {}) } };
  }
  if (sub === 1 && ix.remaining === 32) {
    ix.need(2);
    const address = ix.nonZeroPubkey();
    return { type: `update${name}`, info: ix.signers({ mint: ix.account(0), ...(address ? { [addressField]: address } : {}) }, 1, 'authority', 'multisigAuthority') };
  }
  return null;
}

const discriminator = (name: string) => createHash('sha256').update(`spl_token_metadata_interface:${name}`).digest().subarray(0, 8);
const METADATA_INITIALIZE = discriminator('initialize_account');
const METADATA_UPDATE_FIELD = discriminator('updating_field');
const METADATA_REMOVE_KEY = discriminator('remove_key_ix');
const METADATA_UPDATE_AUTHORITY = discriminator('update_the_authority');
const METADATA_EMIT = discriminator('emitter');
const METADATA_FIELDS = ['name', 'symbol', 'uri'];

/** The token-metadata interface that Token-2022 implements for metadata stored in the mint. */
function parseTokenMetadata(ix: Ix): { type: string; info: Info } | null {
  if (ix.data.length < 8) return null;
  const tag = ix.data.subarray(0, 8);
  ix.seek(8);
  const done = <T extends { type: string; info: Info }>(result: T): T | null => (ix.remaining === 0 ? result : null);
  if (tag.equals(METADATA_INITIALIZE)) {
    const name = ix.borshString();
    const symbol = ix.borshString();
    const uri = ix.borshString();
    ix.need(4);
    return done({
      type: 'initializeTokenMetadata',
      info: { metadata: ix.account(0), updateAuthority: ix.account(1), mint: ix.account(2), mintAuthority: ix.account(3), name, symbol, uri },
    });
  }
  if (tag.equals(METADATA_UPDATE_FIELD)) {
    const kind = ix.u8();
    const field = kind < 3 ? METADATA_FIELDS[kind] : kind === 3 ? ix.borshString() : null;
    if (field === null) return null;
    const value = ix.borshString();
    ix.need(2);
    return done({ type: 'updateTokenMetadataField', info: { metadata: ix.account(0), updateAuthority: ix.account(1), field, value } });
  }
  if (tag.equals(METADATA_REMOVE_KEY)) {
    const flag = ix.u8();
    if (flag > 1) return null;
    const key = ix.borshString();
    ix.need(2);
    return done({ type: 'removeTokenMetadataKey', info: { metadata: ix.account(0), updateAuthority: ix.account(1), key, idempotent: flag === 1 } });
  }
  if (tag.equals(METADATA_UPDATE_AUTHORITY)) {
    const newAuthority = ix.nonZeroPubkey();
    ix.need(2);
    return done({ type: 'updateTokenMetadataAuthority', info: { metadata: ix.account(0), updateAuthority: ix.account(1), newAuthority } });
  }
  if (tag.equals(METADATA_EMIT)) {
    const option = () => {
      const flag = ix.u8();
      if (flag > 1) throw new RangeError('invalid option tag');
      return flag === 1 ? num(ix.u64()) : null;
    };
    const start = option();
    const end = option();
    ix.need(1);
    return done({ type: 'emitTokenMetadata', info: { metadata: ix.account(0), ...(start !== null ? { start } : {}), ...(end !== null ? { end } : {}) } });
  }
  return null;
}

function parseAssociatedToken(ix: Ix): { type: string; info: Info } | null {
  // Borsh: the whole data is the one-byte variant; the original Create carried no data at all.
  if (ix.data.length > 1) return null;
  const kind = ix.data.length === 0 ? 0 : ix.data[0];
  if (kind === 0 || kind === 1) {
    ix.need(6);
    return {
      type: kind === 0 ? 'create' : 'createIdempotent',
      info: { source: ix.account(0), account: ix.account(1), wallet: ix.account(2), mint: ix.account(3), systemProgram: ix.account(4), tokenProgram: ix.account(5) },
    };
  }
  if (kind === 2) {
    ix.need(7);
    return {
      type: 'recoverNested',
      info: {
        nestedSource: ix.account(0),
        nestedMint: ix.account(1),
        destination: ix.account(2),
        nestedOwner: ix.account(3),
        ownerMint: ix.account(4),
        wallet: ix.account(5),
        tokenProgram: ix.account(6),
      },
    };
  }
  return null;
}
