import { execAll, migrate, type Migration, type SqlDatabase } from '@svc/readmodel';
import { createHmac } from 'node:crypto';
import { Keyring } from './keyring';
import { generateWallet, type GeneratedWallet } from './wallet';

const migrations: Migration[] = [
  {
    name: 'service_wallets_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.service_wallets (
           name text primary key,
           public_key text not null unique,
           sealed text not null,
           created_at timestamptz not null default now())`,
        `create table ${schema}.service_settings (
           name text primary key,
           value text not null,
           updated_at timestamptz not null default now())`,
      ]),
  },
];

/**
 * The service's own wallets (the treasury), sealed with the master key like the citizens' custody keys and
 * created once on first use, and the few facts the service remembers about the chain (its lookup table).
 * Secrets derived from the master key (`derive`) let a retried request rebuild the very keypair it made before.
 */
export class ServiceWallets {
  private readonly keys: Keyring;

  constructor(
    private readonly database: SqlDatabase,
    masterKey: Buffer | Keyring,
    private readonly schema = 'vault',
  ) {
    this.keys = Keyring.of(masterKey);
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    return this;
  }

  /** The wallet named `name`, generated and stored the first time; concurrent first calls agree on one. */
  async wallet(name: string): Promise<GeneratedWallet> {
    const found = await this.read(name);
    if (found) return found;
    const fresh = generateWallet();
    await this.database.db
      .insertInto(`${this.schema}.service_wallets`)
      .values({ name, public_key: fresh.publicKey, sealed: this.keys.seal('service-wallet', fresh.secretKey, `service-wallet:${name}`) })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await this.read(name))!;
  }

  private async read(name: string): Promise<GeneratedWallet | undefined> {
    const row = await this.database.db.selectFrom(`${this.schema}.service_wallets`).select(['public_key', 'sealed']).where('name', '=', name).executeTakeFirst();
    return row ? { publicKey: row.public_key, secretKey: new Uint8Array(this.keys.unseal('service-wallet', row.sealed, `service-wallet:${name}`)) } : undefined;
  }

  async setting(name: string): Promise<string | undefined> {
    const row = await this.database.db.selectFrom(`${this.schema}.service_settings`).select('value').where('name', '=', name).executeTakeFirst();
    return row?.value;
  }

  async setSetting(name: string, value: string): Promise<void> {
    await this.database.db
      .insertInto(`${this.schema}.service_settings`)
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: new Date() }))
      .execute();
  }

  /**
   * 32 secret bytes for `purpose`, the same every time for the same purpose and master key: an HMAC under the
   * mint-derivation subkey. A new master key derives new bytes: `npm run rekey` says so.
   */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.keys.subkey('mint-derivation')).update(`derive\n${purpose}`).digest();
  }
}
