import { PublicKey, VersionedTransaction, type Connection, type Keypair } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, NATIVE_MINT, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { creatorVaultPda, feeSharingConfigPda } from '@pump-fun/pump-sdk';
import { coinCreatorVaultAtaPda, coinCreatorVaultAuthorityPda } from '@pump-fun/pump-swap-sdk';
import { bodyValidator, type JsonSchema } from '@svc/contracts';
import type { RunningServer } from '../../scripts/embedded';
import { airdrop, registerCitizen, type TestCitizen } from './citizens';
import { call } from './http';
import { ledgerEntries } from './ledger';
import { embeddedService, type EmbeddedService } from './servers';

export const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const BPS = 10_000n;
export const sol = (lamports: bigint) => Number(lamports) / 1e9;
/** The reply is what the route's documented response schema says. */
export const conforms = (schema: JsonSchema, body: unknown) => expect(bodyValidator(schema)(structuredClone(body))).toBeNull();

/**
 * The service and its bundled chain over a fresh database, for creator-fee tests: a trader funded to trade the coins
 * under test, and the deploys, buys, graduations and vault balances a test reads with web3.js.
 */
export class CreatorFeesRig {
  private service?: EmbeddedService;
  server!: RunningServer;
  base!: string;
  treasury!: string;
  rent!: bigint;
  tokenAccountRent!: bigint;
  /** Trades the coins under test, so that they accrue creator fees. */
  trader!: TestCitizen;

  async start(label: string): Promise<this> {
    this.service = await embeddedService(label, {}, { outboxRecoveryEveryMs: 3_600_000 });
    this.server = this.service.server;
    this.base = this.server.url;
    this.treasury = (await this.server.services.serviceWallets.wallet('treasury')).publicKey;
    this.rent = BigInt(await this.connection().getMinimumBalanceForRentExemption(0, 'confirmed'));
    this.tokenAccountRent = BigInt(await this.connection().getMinimumBalanceForRentExemption(ACCOUNT_SIZE, 'confirmed'));
    this.trader = await this.citizen('trader', 300);
    return this;
  }

  async close(): Promise<void> {
    await this.service?.close();
  }

  readonly connection = (): Connection => this.server.services.chain.connection;

  readonly citizen = async (prefix: string, fundSol = 0, extra: Record<string, unknown> = {}, own?: Keypair): Promise<TestCitizen> => {
    const made = await registerCitizen(this.base, prefix, extra, own);
    if (fundSol > 0) await airdrop(this.connection(), made.wallet, fundSol);
    return made;
  };

  readonly post = (who: TestCitizen, path: string, body: Record<string, unknown> = {}) => call(this.base, 'POST', path, { key: who.key, body });
  readonly get = (who: TestCitizen, path: string) => call(this.base, 'GET', path, { key: who.key });
  readonly lamports = async (wallet: string | PublicKey) => BigInt(await this.connection().getBalance(new PublicKey(wallet), 'confirmed'));
  readonly feeOf = async (signature: string) =>
    BigInt((await this.connection().getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.meta!.fee);

  private readonly wsol = async (address: PublicKey) => {
    const info = await this.connection().getAccountInfo(address, 'confirmed');
    return info ? AccountLayout.decode(info.data).amount : 0n;
  };

  /** A sharing coin's vaults: pump's (lamports above rent) and PumpSwap's (wSOL), as the chain holds them. */
  readonly sharedVaults = async (mint: string): Promise<{ curve: bigint; pool: bigint }> => {
    const config = feeSharingConfigPda(new PublicKey(mint));
    const curve = (await this.lamports(creatorVaultPda(config))) - this.rent;
    return { curve: curve > 0n ? curve : 0n, pool: await this.wsol(coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(config), NATIVE_MINT, TOKEN_PROGRAM_ID)) };
  };

  readonly ownVaults = async (wallet: string): Promise<{ curve: bigint; pool: bigint }> => {
    const creator = new PublicKey(wallet);
    const curve = (await this.lamports(creatorVaultPda(creator))) - this.rent;
    return { curve: curve > 0n ? curve : 0n, pool: await this.wsol(coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(creator), NATIVE_MINT, TOKEN_PROGRAM_ID)) };
  };

  readonly actions = async (action: string) => (await ledgerEntries(this.base)).filter((e) => e.type === 'ActionRecorded' && e.data.action === action);

  readonly deploy = async (who: TestCitizen, symbol: string, extra: Record<string, unknown> = {}): Promise<string> => {
    const res = await this.post(who, '/api/v1/tokens/deploy', { name: `Coin ${symbol}`, symbol, image: PNG, ...extra });
    expect(res.status).toBe(201);
    return res.body.mint;
  };

  readonly buy = async (who: TestCitizen, mint: string, amountSol: number): Promise<void> => {
    const res = await this.post(who, '/api/v1/tokens/buy', { mint, amount_sol: amountSol, slippage_bps: 5000 });
    expect(res.status).toBe(200);
  };

  /** Buys the curve out; resolves once the keeper has migrated the coin to its PumpSwap pool. */
  readonly graduate = async (mint: string): Promise<void> => {
    const whale = await this.citizen('whale', 200);
    const migrated = this.server.localnet!.keeper!.whenMigrated(new PublicKey(mint));
    await this.buy(whale, mint, 120);
    await migrated;
  };

  readonly signAndSubmit = async (who: TestCitizen, transaction: string): Promise<{ status: number; body: any }> => {
    const tx = VersionedTransaction.deserialize(Buffer.from(transaction, 'base64'));
    tx.sign([who.keypair!]);
    return this.post(who, '/api/v1/tx/submit', { transaction: Buffer.from(tx.serialize()).toString('base64') });
  };
}
