import bs58 from 'bs58';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction, sendAndConfirmTransaction, type ParsedAccountData } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ExtensionType,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  TYPE_SIZE,
  LENGTH_SIZE,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createAssociatedTokenAccountInstruction,
  createBurnCheckedInstruction,
  createBurnInstruction,
  createCloseAccountInstruction,
  createInitializeMetadataPointerInstruction,
  createInitializeMint2Instruction,
  createInitializeMintCloseAuthorityInstruction,
  createMint,
  createMintToInstruction,
  createRevokeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  getMintLen,
  getOrCreateAssociatedTokenAccount,
} from '@solana/spl-token';
import { createInitializeInstruction, createUpdateFieldInstruction, pack, type TokenMetadata } from '@solana/spl-token-metadata';
import { parsedInstruction } from '../../apps/localnet/src/rpc/parsedInstructions';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * jsonParsed as agave serves it, read back through web3.js (whose response schemas reject a wrong shape):
 * Token-2022 `extensions` on mints and accounts, and System, SPL Token, Associated Token Account and Memo
 * instructions parsed with agave's field names.
 */

const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const DECIMALS = 6;

describe('localnet jsonParsed: Token-2022 extensions and parsed instructions', () => {
  let t: LocalnetClient;
  let payer: Keypair;
  const mintKeypair = Keypair.generate();
  const mint = mintKeypair.publicKey;
  const holder = Keypair.generate();
  const updateAuthority = Keypair.generate();
  const metadata: TokenMetadata = {
    updateAuthority: updateAuthority.publicKey,
    mint,
    name: 'Parsed Coin',
    symbol: 'PRSD',
    uri: 'https://example.com/parsed.json',
    additionalMetadata: [['site', 'example.com']],
  };
  let payerAta: PublicKey;
  let holderAta: PublicKey;
  let tokenSignature: string;

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  const parsedInfo = async (address: PublicKey) => {
    const { value } = await t.connection.getParsedAccountInfo(address, 'confirmed');
    const data = value?.data as ParsedAccountData;
    return { program: data.program, type: data.parsed.type as string, info: data.parsed.info as Record<string, unknown> };
  };
  const tokenAmount = (amount: number) => ({ amount: String(amount), decimals: DECIMALS, uiAmount: amount / 10 ** DECIMALS, uiAmountString: String(amount / 10 ** DECIMALS) });

  beforeAll(async () => {
    t = await localnet();
    payer = await t.funded(10);
    const space = getMintLen([ExtensionType.MintCloseAuthority, ExtensionType.MetadataPointer]);
    // Token-2022 reallocs the mint for the metadata entry without funding it, so the rent is paid up front.
    const lamports = await t.connection.getMinimumBalanceForRentExemption(space + TYPE_SIZE + LENGTH_SIZE + pack(metadata).length);
    await send(
      [
        SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: mint, space, lamports, programId: TOKEN_2022_PROGRAM_ID }),
        createInitializeMintCloseAuthorityInstruction(mint, payer.publicKey, TOKEN_2022_PROGRAM_ID),
        createInitializeMetadataPointerInstruction(mint, payer.publicKey, mint, TOKEN_2022_PROGRAM_ID),
        createInitializeMint2Instruction(mint, DECIMALS, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
        createInitializeInstruction({
          programId: TOKEN_2022_PROGRAM_ID,
          metadata: mint,
          updateAuthority: updateAuthority.publicKey,
          mint,
          mintAuthority: payer.publicKey,
          name: metadata.name,
          symbol: metadata.symbol,
          uri: metadata.uri,
        }),
        createUpdateFieldInstruction({ programId: TOKEN_2022_PROGRAM_ID, metadata: mint, updateAuthority: updateAuthority.publicKey, field: 'site', value: 'example.com' }),
      ],
      [payer, mintKeypair, updateAuthority],
    );
    payerAta = getAssociatedTokenAddressSync(mint, payer.publicKey, false, TOKEN_2022_PROGRAM_ID);
    holderAta = getAssociatedTokenAddressSync(mint, holder.publicKey, false, TOKEN_2022_PROGRAM_ID);
    tokenSignature = await send(
      [
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, payerAta, payer.publicKey, mint, TOKEN_2022_PROGRAM_ID),
        createAssociatedTokenAccountInstruction(payer.publicKey, holderAta, holder.publicKey, mint, TOKEN_2022_PROGRAM_ID),
        createMintToInstruction(mint, payerAta, payer.publicKey, 1_000, [], TOKEN_2022_PROGRAM_ID),
        createTransferCheckedInstruction(payerAta, mint, holderAta, payer.publicKey, 400, DECIMALS, [], TOKEN_2022_PROGRAM_ID),
        createBurnInstruction(payerAta, mint, payer.publicKey, 500, [], TOKEN_2022_PROGRAM_ID),
        createBurnCheckedInstruction(payerAta, mint, payer.publicKey, 100, DECIMALS, [], TOKEN_2022_PROGRAM_ID),
        createCloseAccountInstruction(payerAta, payer.publicKey, payer.publicKey, [], TOKEN_2022_PROGRAM_ID),
      ],
      [payer],
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  test('a Token-2022 mint carries its extensions in agave’s shape', async () => {
    const { program, type, info } = await parsedInfo(mint);
    expect(program).toBe('spl-token-2022');
    expect(type).toBe('mint');
    expect(info).toMatchObject({ decimals: DECIMALS, supply: '400', mintAuthority: payer.publicKey.toBase58(), freezeAuthority: null, isInitialized: true });
    expect(info.extensions).toEqual([
      { extension: 'mintCloseAuthority', state: { closeAuthority: payer.publicKey.toBase58() } },
      { extension: 'metadataPointer', state: { authority: payer.publicKey.toBase58(), metadataAddress: mint.toBase58() } },
      {
        extension: 'tokenMetadata',
        state: {
          updateAuthority: updateAuthority.publicKey.toBase58(),
          mint: mint.toBase58(),
          name: metadata.name,
          symbol: metadata.symbol,
          uri: metadata.uri,
          additionalMetadata: [['site', 'example.com']],
        },
      },
    ]);
  });

  test('a Token-2022 ATA reports immutableOwner, through getParsedAccountInfo and getParsedTokenAccountsByOwner', async () => {
    const expected = {
      isNative: false,
      mint: mint.toBase58(),
      owner: holder.publicKey.toBase58(),
      state: 'initialized',
      tokenAmount: tokenAmount(400),
      extensions: [{ extension: 'immutableOwner' }],
    };
    expect(await parsedInfo(holderAta)).toEqual({ program: 'spl-token-2022', type: 'account', info: expected });
    const { value } = await t.connection.getParsedTokenAccountsByOwner(holder.publicKey, { mint }, 'confirmed');
    expect(value.map((a) => [a.pubkey.toBase58(), a.account.data.parsed.info])).toEqual([[holderAta.toBase58(), expected]]);
  });

  test('legacy SPL Token mints and accounts carry no extensions', async () => {
    const legacyMint = await createMint(t.connection, payer, payer.publicKey, null, DECIMALS, undefined, { commitment: 'confirmed' }, TOKEN_PROGRAM_ID);
    const account = await getOrCreateAssociatedTokenAccount(t.connection, payer, legacyMint, holder.publicKey, false, 'confirmed', { commitment: 'confirmed' });
    const parsedMint = await parsedInfo(legacyMint);
    expect(parsedMint).toEqual({
      program: 'spl-token',
      type: 'mint',
      info: { decimals: DECIMALS, freezeAuthority: null, isInitialized: true, mintAuthority: payer.publicKey.toBase58(), supply: '0' },
    });
    const parsedAccount = await parsedInfo(account.address);
    expect(parsedAccount.program).toBe('spl-token');
    expect(parsedAccount.info).not.toHaveProperty('extensions');
  });

  test('ATA creation, mintTo, transferChecked, burn and closeAccount parse with agave’s names, CPIs included', async () => {
    const tx = await t.connection.getParsedTransaction(tokenSignature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const [p, h, m, ata, hAta] = [payer.publicKey, holder.publicKey, mint, payerAta, holderAta].map((k) => k.toBase58());
    const token = TOKEN_2022_PROGRAM_ID.toBase58();
    const system = SystemProgram.programId.toBase58();
    const shape = (ix: unknown) => {
      const { program, programId, parsed } = ix as { program: string; programId: PublicKey; parsed: unknown };
      return { program, programId: programId.toBase58(), parsed };
    };
    const ataInfo = (account: string, wallet: string) => ({ source: p, account, wallet, mint: m, systemProgram: system, tokenProgram: token });
    const ataProgram = { program: 'spl-associated-token-account', programId: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' };
    // agave reports both token programs' instructions as `spl-token`; only accounts are told apart (`spl-token-2022`).
    const tokenIx = (type: string, info: Record<string, unknown>) => ({ program: 'spl-token', programId: token, parsed: { type, info } });
    expect(tx?.transaction.message.instructions.map(shape)).toEqual([
      { ...ataProgram, parsed: { type: 'createIdempotent', info: ataInfo(ata, p) } },
      { ...ataProgram, parsed: { type: 'create', info: ataInfo(hAta, h) } },
      tokenIx('mintTo', { mint: m, account: ata, amount: '1000', mintAuthority: p }),
      tokenIx('transferChecked', { source: ata, mint: m, destination: hAta, tokenAmount: tokenAmount(400), authority: p }),
      tokenIx('burn', { account: ata, mint: m, amount: '500', authority: p }),
      tokenIx('burnChecked', { account: ata, mint: m, tokenAmount: tokenAmount(100), authority: p }),
      tokenIx('closeAccount', { account: ata, destination: p, owner: p }),
    ]);
    const rent = await t.connection.getMinimumBalanceForRentExemption(170);
    const creation = (account: string, owner: string) => [
      tokenIx('getAccountDataSize', { mint: m, extensionTypes: ['immutableOwner'] }),
      { program: 'system', programId: system, parsed: { type: 'createAccount', info: { source: p, newAccount: account, lamports: rent, space: 170, owner: token } } },
      tokenIx('initializeImmutableOwner', { account }),
      tokenIx('initializeAccount3', { account, mint: m, owner }),
    ];
    expect(tx?.meta?.innerInstructions?.map(({ index, instructions }) => ({ index, instructions: instructions.map(shape) }))).toEqual([
      { index: 0, instructions: creation(ata, p) },
      { index: 1, instructions: creation(hAta, h) },
    ]);
  });

  test('System seeded, allocate and assign instructions, Memo and approve/revoke parse too', async () => {
    const [p, h, hAta] = [payer.publicKey, holder.publicKey, holderAta].map((k) => k.toBase58());
    const fresh = Keypair.generate();
    const seeded = await PublicKey.createWithSeed(payer.publicKey, 'parsed', SystemProgram.programId);
    const freshRent = await t.connection.getMinimumBalanceForRentExemption(16);
    const memo = 'gm from the localnet ✓';
    const signature = await send(
      [
        SystemProgram.createAccountWithSeed({ fromPubkey: payer.publicKey, newAccountPubkey: seeded, basePubkey: payer.publicKey, seed: 'parsed', lamports: 2_000_000, space: 0, programId: SystemProgram.programId }),
        SystemProgram.transfer({ fromPubkey: seeded, basePubkey: payer.publicKey, toPubkey: holder.publicKey, lamports: 1_000_000, seed: 'parsed', programId: SystemProgram.programId }),
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: fresh.publicKey, lamports: freshRent }),
        SystemProgram.allocate({ accountPubkey: fresh.publicKey, space: 16 }),
        SystemProgram.assign({ accountPubkey: fresh.publicKey, programId: MEMO_PROGRAM_ID }),
        new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(memo) }),
        createApproveInstruction(holderAta, payer.publicKey, holder.publicKey, 50, [], TOKEN_2022_PROGRAM_ID),
        createRevokeInstruction(holderAta, holder.publicKey, [], TOKEN_2022_PROGRAM_ID),
      ],
      [payer, fresh, holder],
    );
    const tx = await t.connection.getParsedTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const system = SystemProgram.programId.toBase58();
    const parsed = tx?.transaction.message.instructions.map((ix) => [(ix as { program: string }).program, (ix as { parsed: unknown }).parsed]);
    expect(parsed).toEqual([
      ['system', { type: 'createAccountWithSeed', info: { source: p, newAccount: seeded.toBase58(), base: p, seed: 'parsed', lamports: 2_000_000, space: 0, owner: system } }],
      [
        'system',
        {
          type: 'transferWithSeed',
          info: { source: seeded.toBase58(), sourceBase: p, destination: h, lamports: 1_000_000, sourceSeed: 'parsed', sourceOwner: system },
        },
      ],
      ['system', { type: 'transfer', info: { source: p, destination: fresh.publicKey.toBase58(), lamports: freshRent } }],
      ['system', { type: 'allocate', info: { account: fresh.publicKey.toBase58(), space: 16 } }],
      ['system', { type: 'assign', info: { account: fresh.publicKey.toBase58(), owner: MEMO_PROGRAM_ID.toBase58() } }],
      ['spl-memo', memo],
      ['spl-token', { type: 'approve', info: { source: hAta, delegate: p, amount: '50', owner: h } }],
      ['spl-token', { type: 'revoke', info: { source: hAta, owner: h } }],
    ]);
  });

  test('the Token-2022 mint’s own setup parses, metadata instructions included', async () => {
    const [{ signature }] = await t.connection.getSignaturesForAddress(mint, { limit: 1000 }, 'confirmed').then((s) => s.slice(-1));
    const tx = await t.connection.getParsedTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const [p, m, u] = [payer.publicKey, mint, updateAuthority.publicKey].map((k) => k.toBase58());
    expect(tx?.transaction.message.instructions.map((ix) => (ix as { parsed: unknown }).parsed).slice(1)).toEqual([
      { type: 'initializeMintCloseAuthority', info: { mint: m, newAuthority: p } },
      { type: 'initializeMetadataPointer', info: { mint: m, authority: p, metadataAddress: m } },
      { type: 'initializeMint2', info: { mint: m, decimals: DECIMALS, mintAuthority: p } },
      { type: 'initializeTokenMetadata', info: { metadata: m, updateAuthority: u, mint: m, mintAuthority: p, name: metadata.name, symbol: metadata.symbol, uri: metadata.uri } },
      { type: 'updateTokenMetadataField', info: { metadata: m, updateAuthority: u, field: 'site', value: 'example.com' } },
    ]);
  });

  test('data or accounts the parsers refuse fall back to the partially decoded form', () => {
    const keys = [payer.publicKey, holder.publicKey, TOKEN_2022_PROGRAM_ID, SystemProgram.programId, ASSOCIATED_TOKEN_PROGRAM_ID].map((k) => k.toBase58());
    const raw = (programIdIndex: number, accounts: number[], data: number[]) => {
      const ix = parsedInstruction(keys, programIdIndex, accounts, Buffer.from(data), 1);
      return { ix, fallback: { programId: keys[programIdIndex], accounts: accounts.map((i) => keys[i]), data: bs58.encode(Buffer.from(data)), stackHeight: 1 } };
    };
    for (const [programIdIndex, accounts, data] of [
      [2, [0, 1, 0], [3, 1, 2]], // a token transfer cut short
      [2, [0, 1], [3, 1, 0, 0, 0, 0, 0, 0, 0]], // a token transfer without its authority
      [2, [0], [99]], // no such token instruction
      [3, [0], [2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]], // a system transfer with one account
      [3, [], [8, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0]], // no accounts at all
      [4, [0, 1, 0, 1, 3, 2], [7]], // no such ATA instruction
      [4, [0, 1, 0, 1, 3], [1]], // createIdempotent without the token program
    ] as [number, number[], number[]][]) {
      const { ix, fallback } = raw(programIdIndex, accounts, data);
      expect(ix).toEqual(fallback);
    }
    expect(raw(3, [0], [8, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0]).ix).toEqual({
      program: 'system',
      programId: keys[3],
      parsed: { type: 'allocate', info: { account: keys[0], space: 16 } },
      stackHeight: 1,
    });
  });
});
