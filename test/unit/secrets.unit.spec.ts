import { ed25519 } from '@noble/curves/ed25519';
import { generateMnemonic, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { bodyValidator, createBountyBody, createPostBody, findSecret, mnemonicChecksumHolds, setNoteBody, submitWorkBody, transferBody } from '@svc/contracts';

const apiKey = `svc_sk_${bs58.encode(Keypair.generate().publicKey.toBytes().subarray(0, 12))}_${bs58.encode(Keypair.generate().publicKey.toBytes())}`;
/** A BIP39 test vector (entropy 7f7f...7f). */
const VECTOR_12 = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
/** A BIP39 test vector (entropy of 32 zero bytes). */
const VECTOR_24 = `${'abandon '.repeat(23)}art`;

/** A signature as a trade's explorer link shows it: 64 bytes of base58, like a secret key. */
function signature(): string {
  const seed = ed25519.utils.randomPrivateKey();
  return bs58.encode(ed25519.sign(Buffer.from(`transfer ${Math.random()}`), seed));
}

describe('findSecret', () => {
  describe('finds', () => {
    const keypair = Keypair.generate();
    const base58Key = bs58.encode(keypair.secretKey);

    it.each([
      ['an API key alone', apiKey],
      ['an API key in a header someone pasted', `try: curl -H "Authorization: Bearer ${apiKey}" localhost`],
    ])('%s', (_, text) => expect(findSecret(text)).toBe('api_key'));

    it.each([
      ['a base58 secret key alone', base58Key],
      ['a base58 secret key inside a sentence', `here is my wallet key:${base58Key}, fund it pls`],
      ['a keypair file (JSON byte array)', JSON.stringify(Array.from(keypair.secretKey))],
      ['a pretty-printed byte array in a post', `my id.json is\n[\n  ${Array.from(keypair.secretKey).join(',\n  ')}\n]\nwhat now?`],
    ])('%s', (_, text) => expect(findSecret(text)).toBe('secret_key'));

    it.each([
      ['a 12-word test vector', VECTOR_12],
      ['a 24-word test vector', VECTOR_24],
      ['a fresh 15-word phrase', generateMnemonic(wordlist, 160)],
      ['a fresh 18-word phrase', generateMnemonic(wordlist, 192)],
      ['a fresh 21-word phrase', generateMnemonic(wordlist, 224)],
      ['a fresh 24-word phrase', generateMnemonic(wordlist, 256)],
      ['a phrase in capitals', VECTOR_12.toUpperCase()],
      ['a phrase as a numbered list', VECTOR_12.split(' ').map((word, i) => `${i + 1}. ${word}`).join('\n')],
      ['a phrase with list words on both sides', `please help: ${VECTOR_12} thank you`],
      ['a phrase separated by commas', `seed = ${VECTOR_12.split(' ').join(', ')}.`],
    ])('%s', (_, text) => expect(findSecret(text)).toBe('mnemonic'));
  });

  describe('lets ordinary text pass', () => {
    const invalid12 = 'legal winner thank year wave sausage worth useful legal winner thank thank';

    it('such as 12 list words whose checksum fails', () => {
      expect(validateMnemonic(invalid12, wordlist)).toBe(false);
      expect(findSecret(invalid12)).toBeUndefined();
      expect(findSecret(`${invalid12.split(' ').slice(0, 11).join(' ')}`)).toBeUndefined();
    });

    it.each([
      ['gm', 'gm'],
      ['price talk', 'SOL at 150, bought the dip on $WIF, target 2x by friday. ngmi if you sell now'],
      ['an English sentence of many words', 'the market is pumping today and I bought more sol at the dip because the chart looked good to me'],
      ['a wallet address (32 bytes)', `send it to ${Keypair.generate().publicKey.toBase58()} thanks`],
      ['a mint', 'aped into So11111111111111111111111111111111111111112 and 6p6xgHyF7AeE6TZkSmFsko444wqoP15icUSqi2jfGiPN'],
      ['the guide’s placeholders', 'send "Authorization: Bearer svc_sk_..." or svc_sk_3B11LhVPEq4o... as X-API-Key'],
      ['a price series of 64 small numbers', JSON.stringify(Array.from({ length: 64 }, (_, i) => (i * 37) % 256))],
      ['64 random bytes that are no keypair', bs58.encode(Keypair.generate().secretKey.map((byte, i) => (i === 63 ? byte ^ 1 : byte)))],
    ])('such as %s', (_, text) => expect(findSecret(text)).toBeUndefined());

    it('such as transaction signatures, which are 64 bytes of base58 too', () => {
      const signatures = Array.from({ length: 200 }, signature);
      for (const sig of signatures) expect(findSecret(`bought at https://solscan.io/tx/${sig} lfg`)).toBeUndefined();
      expect(signatures.some((sig) => sig.length >= 86)).toBe(true);
    });
  });
});

describe('mnemonicChecksumHolds', () => {
  const indicesOf = (phrase: string) => phrase.split(' ').map((word) => wordlist.indexOf(word));

  it('answers as @scure/bip39 validateMnemonic does, on phrases and on random runs of list words', () => {
    const phrases = [128, 160, 192, 224, 256].flatMap((bits) => Array.from({ length: 40 }, () => generateMnemonic(wordlist, bits)));
    const random = Array.from({ length: 1_000 }, (_, i) =>
      Array.from({ length: [12, 15, 18, 21, 24][i % 5]! }, () => wordlist[Math.floor(Math.random() * wordlist.length)]!).join(' '),
    );
    const answers = [VECTOR_12, VECTOR_24, ...phrases, ...random].map((phrase) => [mnemonicChecksumHolds(indicesOf(phrase)), validateMnemonic(phrase, wordlist)]);
    expect(answers.filter(([ours, theirs]) => ours !== theirs)).toEqual([]);
    // Both outcomes are exercised: every generated phrase holds, and most random runs do not.
    expect(answers.filter(([, theirs]) => theirs).length).toBeGreaterThanOrEqual(202);
    expect(answers.filter(([, theirs]) => !theirs).length).toBeGreaterThan(800);
  });
});

describe('the free-text fields of a request', () => {
  const keypair = Keypair.generate();
  const base58Key = bs58.encode(keypair.secretKey);
  /** The shortest key of the shape the vault reads: one fits in a tag. */
  const shortestKey = `svc_sk_${'8'.repeat(8)}_${'3'.repeat(32)}`;

  it.each([
    ['a post', createPostBody, { body: `gm ${base58Key}` }, 'body', 'secret_key', base58Key],
    ['a post’s tag', createPostBody, { body: 'gm', tags: ['fine', shortestKey] }, 'tags.1', 'api_key', shortestKey],
    ['a bounty’s title', createBountyBody, { title: `${VECTOR_12}`, body: 'b', reward_sol: 1 }, 'title', 'mnemonic', VECTOR_12],
    ['a bounty’s body', createBountyBody, { title: 'ttt', body: JSON.stringify(Array.from(keypair.secretKey)), reward_sol: 1 }, 'body', 'secret_key', Array.from(keypair.secretKey).join(',')],
    ['a submission', submitWorkBody, { body: `done, key ${apiKey}` }, 'body', 'api_key', apiKey],
    ['a memory note', setNoteBody, { key: 'k', value: VECTOR_24 }, 'value', 'mnemonic', VECTOR_24],
    ['a transfer memo', transferBody, { to: 'bob', amount: 1, memo: apiKey }, 'memo', 'api_key', apiKey],
  ])('refuses %s that holds a secret, naming its kind and never the secret', (_, schema, body, field, kind, secret) => {
    const refused = bodyValidator(schema)(body);
    expect(refused).toMatchObject({ code: 'secret_in_body', field, kind });
    expect(refused!.message).toContain(field);
    expect(refused!.message).not.toContain(secret);
  });
});
