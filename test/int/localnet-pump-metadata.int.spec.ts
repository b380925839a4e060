import { Keypair, PublicKey, SendTransactionError, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { ExtensionType, getMintLen, getTokenMetadata } from '@solana/spl-token';
import fc from 'fast-check';
import { PUMP_SDK } from '@pump-fun/pump-sdk';
import { pumpProgram } from '../../apps/localnet/src/programs/pump';
import { pumpSwapProgram } from '../../apps/localnet/src/programs/pumpSwap';
import { pumpFeesProgram } from '../../apps/localnet/src/programs/pumpFees';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * create_v2 over every metadata size the program accepts. The mint grows by realloc when Token-2022 writes the
 * TokenMetadata entry, so the coin's metadata length decides the mint's final size and the rent it must hold,
 * including the one total (37 bytes) at which Token-2022 pads the mint past the 355-byte Multisig length.
 */

const MAX_NAME = 32;
const MAX_SYMBOL = 13;
const MAX_URI = 200;

interface Metadata {
  name: string;
  symbol: string;
  uri: string;
}

const bytes = (s: string) => Buffer.byteLength(s);
const total = ({ name, symbol, uri }: Metadata) => bytes(name) + bytes(symbol) + bytes(uri);

/** A name/symbol/uri whose byte lengths add up to `size`, filling the name first, then the symbol, then the uri. */
function ofTotal(size: number): Metadata {
  const name = Math.min(size, MAX_NAME);
  const symbol = Math.min(size - name, MAX_SYMBOL);
  return { name: 'N'.repeat(name), symbol: 'S'.repeat(symbol), uri: 'u'.repeat(size - name - symbol) };
}

describe('pump create_v2 on the localnet: Token-2022 metadata of any accepted length', () => {
  let t: LocalnetClient;
  let creator: Keypair;

  beforeAll(async () => {
    t = await localnet({ programs: [pumpProgram, pumpSwapProgram, pumpFeesProgram] });
    creator = await t.funded(500);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function create(metadata: Metadata): Promise<PublicKey> {
    const mint = Keypair.generate();
    const ix = await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, ...metadata, creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
    await sendAndConfirmTransaction(t.connection, new Transaction().add(ix), [creator, mint], { commitment: 'confirmed' });
    return mint.publicKey;
  }

  /** The coin exists, its metadata reads back as given, and the mint holds rent for the size Token-2022 grew it to. */
  async function expectCreated(metadata: Metadata): Promise<number> {
    const mint = await create(metadata);
    const read = await getTokenMetadata(t.connection, mint, 'confirmed');
    // spl-token's UTF-8 decoder drops NUL characters; the stored bytes keep them (the length check below counts them).
    const readable = (s: string) => s.replace(/\0/g, '');
    expect({ name: read?.name, symbol: read?.symbol, uri: read?.uri }).toEqual({ name: readable(metadata.name), symbol: readable(metadata.symbol), uri: readable(metadata.uri) });
    const account = (await t.connection.getAccountInfo(mint, 'confirmed'))!;
    // update authority, mint, three length-prefixed strings and an empty additional-metadata vec
    const metadataLen = 32 + 32 + 3 * 4 + total(metadata) + 4;
    expect(account.data.length).toBe(getMintLen([ExtensionType.MetadataPointer], { [ExtensionType.TokenMetadata]: metadataLen }));
    expect(account.lamports).toBeGreaterThanOrEqual(await t.connection.getMinimumBalanceForRentExemption(account.data.length, 'confirmed'));
    return account.data.length;
  }

  async function expectRefused(metadata: Metadata, code: number): Promise<void> {
    const error = await create(metadata).then(
      () => new Error('expected create_v2 to be refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SendTransactionError);
    expect((error as SendTransactionError).logs?.join('\n')).toContain(`custom program error: 0x${code.toString(16)}`);
  }

  test('a name + symbol + uri of 37 bytes (mint reaching the Multisig length) creates the coin', async () => {
    // 355 bytes would read as a Multisig; Token-2022 pads the mint by one extension-type width.
    expect(await expectCreated({ name: 'GRAD', symbol: 'GRAD', uri: 'https://example.com/GRAD.json' })).toBe(357);
    expect(await expectCreated({ name: 'GRAD', symbol: 'GRAD', uri: 'https://example.com/GRAD.jso' })).toBe(354);
    expect(await expectCreated({ name: 'GRAD', symbol: 'GRAD', uri: 'https://example.com/GRAD.jsonx' })).toBe(356);
  });

  test('every total metadata length from empty to the name, symbol and uri limits creates the coin', async () => {
    const sizes = Array.from({ length: MAX_NAME + MAX_SYMBOL + MAX_URI + 1 }, (_, size) => size);
    for (let from = 0; from < sizes.length; from += 50) {
      await Promise.all(sizes.slice(from, from + 50).map((size) => expectCreated(ofTotal(size))));
    }
  }, 60_000);

  test('property: any name, symbol and uri within the byte limits, multi-byte characters included, reads back', async () => {
    const within = (max: number) => fc.string({ unit: 'binary', maxLength: max }).filter((s) => bytes(s) <= max);
    const metadata = fc.record({ name: within(MAX_NAME), symbol: within(MAX_SYMBOL), uri: within(MAX_URI) });
    // Byte splits of exactly 37, the total at which the mint reaches the Multisig length.
    const totalling37 = fc
      .tuple(fc.integer({ min: 0, max: MAX_NAME }), fc.integer({ min: 0, max: MAX_SYMBOL }))
      .filter(([name, symbol]) => name + symbol <= 37)
      .map(([name, symbol]) => ({ name: 'é'.repeat(name >> 1) + 'n'.repeat(name & 1), symbol: 's'.repeat(symbol), uri: 'u'.repeat(37 - name - symbol) }));
    await fc.assert(fc.asyncProperty(fc.oneof(metadata, totalling37), async (m) => void (await expectCreated(m))), { numRuns: 60 });
  }, 60_000);

  test('one byte over a limit is refused with NameTooLong, SymbolTooLong or UriTooLong', async () => {
    await expectCreated({ name: 'N'.repeat(MAX_NAME), symbol: 'S'.repeat(MAX_SYMBOL), uri: 'u'.repeat(MAX_URI) });
    await expectRefused({ name: 'N'.repeat(MAX_NAME + 1), symbol: 'S', uri: 'u' }, 6043);
    await expectRefused({ name: 'N', symbol: 'S'.repeat(MAX_SYMBOL + 1), uri: 'u' }, 6044);
    await expectRefused({ name: 'N', symbol: 'S', uri: 'u'.repeat(MAX_URI + 1) }, 6045);
  });
});
