import bs58 from 'bs58';
import fc from 'fast-check';
import { Keypair, PublicKey } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  decodeTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { ChainError, parsePublicKey, rawToUi, tokenTransferInstructions, uiToRaw } from '@svc/chain';

/** The refusal a call throws, as the API would map it. */
function refusal(fn: () => unknown): { code: string; details: Record<string, unknown>; message: string } {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof ChainError)) throw error;
    const { code, details, message } = error.rejection;
    return { code, details, message };
  }
  throw new Error('expected a refusal');
}

describe('uiToRaw: whole units to base units, exactly', () => {
  it.each([
    [0.1, 9, 100_000_000n],
    [1e-9, 9, 1n],
    [1e-7, 9, 100n],
    [1.5e-7, 9, 150n],
    [0.3, 9, 300_000_000n],
    // 4.35 * 100 is 434.99999999999994 in binary floating point.
    [4.35, 2, 435n],
    [123456789.123456, 6, 123_456_789_123_456n],
    [1, 0, 1n],
    [1, 9, 1_000_000_000n],
    [123.456e3, 0, 123_456n],
    [18446744073709, 6, 18_446_744_073_709_000_000n],
  ])('%p with %p decimals is %p', (amount, decimals, raw) => {
    expect(uiToRaw(amount, decimals)).toBe(raw);
  });

  it.each([
    [1.0000000001, 9, /10 decimal places; this mint has 9/],
    [0.1 + 0.2, 9, /17 decimal places; this mint has 9/],
    [1.5e-7, 6, /8 decimal places; this mint has 6/],
    [1.5, 0, /1 decimal places; this mint has 0/],
    [123456789.1234567, 6, /7 decimal places/],
    [0, 9, /positive/],
    [-1, 9, /positive/],
    [Number.NaN, 9, /positive/],
    [Number.POSITIVE_INFINITY, 9, /positive/],
    [1e20, 0, /u64/],
    [18446744073709551615, 0, /u64/],
    [18446744073710, 6, /u64/],
  ])('refuses %p with %p decimals as invalid_request on amount', (amount, decimals, why) => {
    const refused = refusal(() => uiToRaw(amount, decimals));
    expect(refused).toMatchObject({ code: 'invalid_request', details: { field: 'amount' } });
    expect(refused.message).toMatch(why);
  });

  it('refuses a non-number sent where a number belongs', () => {
    expect(refusal(() => uiToRaw('1' as unknown as number, 9))).toMatchObject({ code: 'invalid_request', details: { field: 'amount' } });
  });

  it('is a programming error to pass decimals no mint can have', () => {
    expect(() => uiToRaw(1, -1)).toThrow(RangeError);
    expect(() => uiToRaw(1, 1.5)).toThrow(RangeError);
    expect(() => uiToRaw(1, 256)).toThrow(RangeError);
  });
});

describe('rawToUi', () => {
  it.each([
    [100_000_000n, 9, 0.1],
    [1n, 9, 1e-9],
    [123_456_789_123_456n, 6, 123456789.123456],
    [0n, 9, 0],
    [5n, 0, 5],
    [1_000_000_000n, 9, 1],
    [18_446_744_073_709_551_615n, 9, 18446744073.709551615],
  ])('%p base units with %p decimals is %p', (raw, decimals, ui) => {
    expect(rawToUi(raw, decimals)).toBe(ui);
  });

  it('refuses a negative amount', () => {
    expect(() => rawToUi(-1n, 9)).toThrow(RangeError);
  });

  it('round-trips through uiToRaw for every amount a double holds exactly (up to 15 significant digits)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 18 }), (raw, decimals) => {
        expect(uiToRaw(rawToUi(raw, decimals), decimals)).toBe(raw);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parsePublicKey', () => {
  const wallet = Keypair.generate().publicKey;

  it('accepts any 32-byte base58 key, on the curve or off it', () => {
    expect(parsePublicKey(wallet.toBase58(), 'to').equals(wallet)).toBe(true);
    expect(parsePublicKey('11111111111111111111111111111111', 'to').equals(PublicKey.default)).toBe(true);
    const ata = getAssociatedTokenAddressSync(TOKEN_PROGRAM_ID, wallet);
    expect(PublicKey.isOnCurve(ata.toBytes())).toBe(false);
    expect(parsePublicKey(ata.toBase58(), 'mint').equals(ata)).toBe(true);
  });

  it.each([
    ['not base58', '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl'],
    ['31 bytes', bs58.encode(new Uint8Array(31).fill(7))],
    ['33 bytes', bs58.encode(new Uint8Array(33).fill(7))],
    ['33 leading ones (33 zero bytes)', '1'.repeat(33)],
    ['an empty string', ''],
    ['padded with a space', ` ${Keypair.generate().publicKey.toBase58()}`],
    ['a handle', 'alice'],
    ['a 64-byte secret key', bs58.encode(Keypair.generate().secretKey)],
    ['a number', 42],
    ['null', null],
    ['an object', { toBase58: () => 'x' }],
  ])('refuses %s as invalid_pubkey naming the field', (_, text) => {
    const refused = refusal(() => parsePublicKey(text, 'mint'));
    expect(refused).toMatchObject({ code: 'invalid_pubkey', details: { field: 'mint' } });
    expect(refused.message).toMatch(/^mint must be a base58 Solana public key/);
  });
});

describe('tokenTransferInstructions', () => {
  const owner = Keypair.generate().publicKey;
  const to = Keypair.generate().publicKey;
  const mint = Keypair.generate().publicKey;

  it.each([
    ['SPL Token', TOKEN_PROGRAM_ID],
    ['Token-2022', TOKEN_2022_PROGRAM_ID],
  ])('creates the recipient’s %s account idempotently, then transferChecked between the two associated accounts', (_, programId) => {
    const [create, transfer] = tokenTransferInstructions({ owner, to, mint, programId, decimals: 6, raw: 1_500_000n });
    const source = getAssociatedTokenAddressSync(mint, owner, false, programId);
    const destination = getAssociatedTokenAddressSync(mint, to, false, programId);
    expect(create!.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)).toBe(true);
    // 1 = CreateIdempotent: it succeeds when the account already exists.
    expect([...create!.data]).toEqual([1]);
    expect(create!.keys.map((k) => k.pubkey.toBase58())).toEqual(
      [owner, destination, to, mint].map((k) => k.toBase58()).concat(['11111111111111111111111111111111', programId.toBase58()]),
    );
    expect(transfer!.programId.equals(programId)).toBe(true);
    const decoded = decodeTransferCheckedInstruction(transfer!, programId);
    expect(decoded.keys.source.pubkey.equals(source)).toBe(true);
    expect(decoded.keys.mint.pubkey.equals(mint)).toBe(true);
    expect(decoded.keys.destination.pubkey.equals(destination)).toBe(true);
    expect(decoded.keys.owner.pubkey.equals(owner)).toBe(true);
    expect(decoded.data).toMatchObject({ amount: 1_500_000n, decimals: 6 });
  });

  it('refuses an off-curve recipient (a token account or a program address), which no one could spend from', () => {
    const tokenAccount = getAssociatedTokenAddressSync(mint, to);
    const refused = refusal(() => tokenTransferInstructions({ owner, to: tokenAccount, mint, programId: TOKEN_PROGRAM_ID, decimals: 6, raw: 1n }));
    expect(refused).toMatchObject({ code: 'invalid_pubkey', details: { field: 'to' } });
  });

  it('moves at least one base unit', () => {
    expect(() => tokenTransferInstructions({ owner, to, mint, programId: TOKEN_PROGRAM_ID, decimals: 6, raw: 0n })).toThrow(RangeError);
  });
});
