import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519';
import { wordlist } from '@scure/bip39/wordlists/english';
import bs58 from 'bs58';

/** What a text was refused for holding: a bearer key of this service, a wallet's secret key, or a recovery phrase. */
export type SecretKind = 'api_key' | 'secret_key' | 'mnemonic';

export const SECRET_KINDS: Record<SecretKind, string> = {
  api_key: 'an API key (svc_sk_...)',
  secret_key: 'a Solana secret key (64 bytes, in base58 or as a JSON byte array)',
  mnemonic: 'a BIP39 recovery phrase (mnemonic)',
};

/** The shape of a key `newApiKey` makes (libs/vault): the placeholder `svc_sk_...` the guides write is none. */
const API_KEY = /svc_sk_[1-9A-HJ-NP-Za-km-z]{8,24}_[1-9A-HJ-NP-Za-km-z]{32,64}/;
const BASE58_RUN = /[1-9A-HJ-NP-Za-km-z]+/g;
/** 64 bytes take 64 (all zeros) to 88 base58 characters. */
const MIN_BASE58_OF_64 = 64;
const MAX_BASE58_OF_64 = 88;
const BYTE_ARRAY = /\[[\d\s,]*\]/g;
const WORD = /[a-z]+/g;
const INDEX_OF = new Map(wordlist.map((word, index) => [word, index]));
const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24];

/**
 * A transaction signature is also 64 bytes of base58, and signatures are everyday trading talk, so length alone
 * cannot tell a secret key. A Solana secret key is the ed25519 seed followed by its own public key: the second
 * half is derived from the first. A signature is R (a curve point) then S (a scalar below the group order), and
 * S equal to the public key of R's bytes as a seed happens with probability about 2^-252.
 */
function isKeypairBytes(bytes: Uint8Array): boolean {
  if (bytes.length !== 64) return false;
  const derived = ed25519.getPublicKey(bytes.subarray(0, 32));
  return derived.every((byte, i) => byte === bytes[32 + i]);
}

function holdsBase58SecretKey(text: string): boolean {
  for (const [run] of text.matchAll(BASE58_RUN)) {
    if (run.length < MIN_BASE58_OF_64 || run.length > MAX_BASE58_OF_64) continue;
    if (isKeypairBytes(bs58.decode(run))) return true;
  }
  return false;
}

/** The form of a keypair file (`solana-keygen`'s id.json) and of `Array.from(keypair.secretKey)`. */
function holdsByteArraySecretKey(text: string): boolean {
  for (const [array] of text.matchAll(BYTE_ARRAY)) {
    const items = array.slice(1, -1).split(',').map((item) => item.trim());
    if (items.length !== 64 || !items.every((item) => /^\d{1,3}$/.test(item) && Number(item) <= 255)) continue;
    if (isKeypairBytes(Uint8Array.from(items, Number))) return true;
  }
  return false;
}

/**
 * BIP39's checksum of a window of word indices: the words are 11 bits each, the last length/3 bits are the first
 * bits of SHA-256 of the rest (the entropy). It is @scure/bip39's validateMnemonic over indices already looked up:
 * that one splits, normalizes and looks up every word of every window again, which made a long post of list words
 * take seconds (the unit test holds the two to the same answers).
 */
export function mnemonicChecksumHolds(indices: readonly number[]): boolean {
  const checksumBits = indices.length / 3;
  let value = 0n;
  for (const index of indices) value = (value << 11n) | BigInt(index);
  const entropyHex = (value >> BigInt(checksumBits)).toString(16).padStart(((indices.length * 11 - checksumBits) / 4) | 0, '0');
  const checksum = Number(value & ((1n << BigInt(checksumBits)) - 1n));
  const hash = createHash('sha256').update(Buffer.from(entropyHex, 'hex')).digest();
  return hash[0]! >> (8 - checksumBits) === checksum;
}

/**
 * Runs of words from the English list, whatever stands between them (spaces, newlines, commas, the numbers of a
 * numbered list), and in any window of a mnemonic's length a valid checksum. The checksum is what tells a phrase
 * from words that happen to be on the list: 12 such words pass it by chance one time in 16, so ordinary text, in
 * which "the", "a", "is" and "to" (none on the list) break every run, is seldom taken for one.
 */
function holdsMnemonic(text: string): boolean {
  let run: number[] = [];
  const check = () => {
    for (const length of MNEMONIC_LENGTHS) {
      for (let start = 0; start + length <= run.length; start += 1) {
        if (mnemonicChecksumHolds(run.slice(start, start + length))) return true;
      }
    }
    return false;
  };
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    const index = INDEX_OF.get(word);
    if (index !== undefined) {
      run.push(index);
      continue;
    }
    if (check()) return true;
    run = [];
  }
  return check();
}

/**
 * The kind of secret a free text holds, if any: what a post, a bounty, a note or a memo must never carry. An
 * agent that pastes its key does so in these shapes; one made to hide it (split, reversed, re-encoded) is not
 * what this can stop, and the spending policy is there for that.
 */
export function findSecret(text: string): SecretKind | undefined {
  if (API_KEY.test(text)) return 'api_key';
  if (holdsBase58SecretKey(text) || holdsByteArraySecretKey(text)) return 'secret_key';
  if (holdsMnemonic(text)) return 'mnemonic';
  return undefined;
}
