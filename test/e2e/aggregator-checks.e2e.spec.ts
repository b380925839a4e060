import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, createApproveInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
  type Connection,
} from '@solana/web3.js';
import { embeddedService, type EmbeddedService } from '../support/servers';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { PNG } from '../support/creatorFees';
import { call } from '../support/http';

jest.setTimeout(120_000);

type Tamper = (instructions: TransactionInstruction[], user: PublicKey) => TransactionInstruction[];
type QuoteTamper = (quote: Record<string, unknown>) => Record<string, unknown>;

/**
 * The bundled chain's aggregator behind a proxy that, when told to, rewrites the swap transaction it returns: the
 * service is pointed at the proxy (JUPITER_URL), as it would be at a compromised or spoofed aggregator.
 */
async function hostileAggregator(): Promise<{ url: string; upstream: { url: string }; tamper: { with?: Tamper; quote?: QuoteTamper }; close(): Promise<void> }> {
  const upstream = { url: '' };
  const tamper: { with?: Tamper; quote?: QuoteTamper } = {};
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', async () => {
      const answer = await fetch(`${upstream.url}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'POST' ? raw : undefined });
      let text = await answer.text();
      if (req.url?.startsWith('/swap/v1/quote') && answer.ok && tamper.quote) text = JSON.stringify(tamper.quote(JSON.parse(text)));
      if (req.url === '/swap/v1/swap' && answer.ok && tamper.with) {
        const reply = JSON.parse(text) as { swapTransaction: string };
        const user = new PublicKey((JSON.parse(raw) as { userPublicKey: string }).userPublicKey);
        const honest = VersionedTransaction.deserialize(Buffer.from(reply.swapTransaction, 'base64'));
        const message = TransactionMessage.decompile(honest.message);
        const instructions = tamper.with(message.instructions, user);
        const hostile = new VersionedTransaction(new TransactionMessage({ payerKey: user, recentBlockhash: message.recentBlockhash, instructions }).compileToV0Message());
        text = JSON.stringify({ ...reply, swapTransaction: Buffer.from(hostile.serialize()).toString('base64') });
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    upstream,
    tamper,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('a swap the aggregator builds is checked before it is signed', () => {
  let service: EmbeddedService;
  let aggregator: Awaited<ReturnType<typeof hostileAggregator>>;
  let trader: TestCitizen;
  let mint: string;
  const attacker = Keypair.generate().publicKey;
  const connection = (): Connection => service.server.services.chain.connection;
  const swap = (body: Record<string, unknown>) => call(service.server.url, 'POST', '/api/v1/swap', { key: trader.key, body });
  const signatures = async () => (await connection().getSignaturesForAddress(new PublicKey(trader.wallet), {}, 'confirmed')).length;

  beforeAll(async () => {
    aggregator = await hostileAggregator();
    service = await embeddedService('aggregator_checks', { JUPITER_URL: aggregator.url }, { outboxRecoveryEveryMs: 3_600_000 });
    aggregator.upstream.url = service.server.services.chain.options.rpcUrl;
    trader = await registerCitizen(service.server.url, 'aggchk');
    await airdrop(connection(), trader.wallet, 5);
    const coin = await call(service.server.url, 'POST', '/api/v1/tokens/deploy', { key: trader.key, body: { name: 'Checked', symbol: 'CHK', image: PNG } });
    expect(coin.status).toBe(201);
    mint = coin.body.mint;
  });
  afterAll(async () => {
    await service?.close();
    await aggregator?.close();
  });

  it('signs an honest swap each way', async () => {
    const bought = await swap({ input_mint: NATIVE_MINT.toBase58(), output_mint: mint, amount: 0.05 });
    expect([bought.status, bought.body.executed, bought.body.error?.message]).toEqual([200, true, undefined]);
    const sold = await swap({ input_mint: mint, output_mint: NATIVE_MINT.toBase58(), amount: Math.floor(bought.body.quoted_out / 2) });
    expect([sold.status, sold.body.executed, sold.body.error?.message]).toEqual([200, true, undefined]);
  });

  const hostile: Array<[string, Tamper, RegExp]> = [
    ['a transfer of the caller’s SOL to someone else', (ixs, user) => [...ixs, SystemProgram.transfer({ fromPubkey: user, toPubkey: attacker, lamports: LAMPORTS_PER_SOL })], /moves -\d+ lamports/],
    [
      'a delegate approved on the caller’s token account',
      (ixs, user) => [...ixs, createApproveInstruction(getAssociatedTokenAddressSync(new PublicKey(mint), user, true, TOKEN_2022_PROGRAM_ID), attacker, user, 1n, [], TOKEN_2022_PROGRAM_ID)],
      /approves a delegate/,
    ],
    ['the caller’s wallet given to another program', (ixs, user) => [...ixs, SystemProgram.assign({ accountPubkey: user, programId: attacker })], /owner program of your wallet/],
    [
      'a program outside the allowlist',
      (ixs, user) => [...ixs, new TransactionInstruction({ programId: new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'), keys: [{ pubkey: user, isSigner: true, isWritable: false }], data: Buffer.from('hi') })],
      /not on the allowlist/,
    ],
    ['a swap that delivers nothing', (ixs) => ixs.filter((ix) => ix.programId.equals(SystemProgram.programId) || ix.programId.toBase58().startsWith('Compute')), /delivers 0 of/],
  ];

  it.each(hostile)('refuses %s with 502 aggregator_rejected, signing nothing', async (_what, tamper, reason) => {
    const [before, lamports] = [await signatures(), await connection().getBalance(new PublicKey(trader.wallet), 'confirmed')];
    aggregator.tamper.with = tamper;
    try {
      const res = await swap({ input_mint: NATIVE_MINT.toBase58(), output_mint: mint, amount: 0.05 });
      expect([res.status, res.body.error?.code]).toEqual([502, 'aggregator_rejected']);
      expect(res.body.error.message).toMatch(reason);
    } finally {
      aggregator.tamper.with = undefined;
    }
    expect(await signatures()).toBe(before);
    expect(await connection().getBalance(new PublicKey(trader.wallet), 'confirmed')).toBe(lamports);
  });

  it('refuses a quote whose minimum out ignores the slippage asked, or that quotes another trade', async () => {
    for (const tamper of [(q: Record<string, unknown>) => ({ ...q, otherAmountThreshold: '0' }), (q: Record<string, unknown>) => ({ ...q, inAmount: '1' })]) {
      aggregator.tamper.quote = tamper;
      try {
        const res = await swap({ input_mint: NATIVE_MINT.toBase58(), output_mint: mint, amount: 0.05, slippage_bps: 100 });
        expect([res.status, res.body.error?.code]).toEqual([502, 'aggregator_rejected']);
      } finally {
        aggregator.tamper.quote = undefined;
      }
    }
  });
});
