import { sql } from 'kysely';
import { execAll, type Migration, newUlid } from '@svc/readmodel';
import { VaultStore } from './vaultStore';

const migrations: Migration[] = [
  {
    name: 'faucet_grants_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.faucet_grants (
           id text primary key,
           agent_id text not null,
           idempotency_key text,
           lamports bigint not null,
           at bigint not null,
           signature text,
           blockhash text,
           last_valid_block_height bigint,
           receipt jsonb)`,
        `create unique index faucet_grants_idempotency on ${schema}.faucet_grants (agent_id, idempotency_key) where idempotency_key is not null`,
        `create index faucet_grants_window on ${schema}.faucet_grants (agent_id, at)`,
      ]),
  },
];

/** An airdrop the cluster's faucet accepted, and the blockhash it is confirmed against. */
export interface AcceptedAirdrop {
  signature: string;
  blockhash: string;
  lastValidBlockHeight: number;
}

/**
 * One airdrop a citizen asked the faucet for, counted against its hourly allowance from the moment it was
 * reserved: `airdrop` once the cluster's faucet accepted it, `receipt` once it is on the ledger.
 */
export interface FaucetGrant {
  id: string;
  agentId: string;
  lamports: bigint;
  at: number;
  airdrop: AcceptedAirdrop | null;
  receipt: { seq: number; hash: string } | null;
}

export interface FaucetRequest {
  agentId: string;
  /** The request's Idempotency-Key: a retry under it finds the grant an earlier attempt reserved. */
  idempotencyKey?: string;
  lamports: bigint;
  /** What one citizen may take within any `windowMs`. */
  capLamports: bigint;
  windowMs: number;
  now: number;
}

export type FaucetReservation =
  | { kind: 'reserved'; grant: FaucetGrant }
  /** An earlier attempt under the same Idempotency-Key reserved this grant. */
  | { kind: 'earlier'; grant: FaucetGrant }
  /** Over the allowance: what the window holds, and the first moment enough of it has aged out. */
  | { kind: 'over'; usedLamports: bigint; freesAt: number };

function toGrant(row: Record<string, unknown>): FaucetGrant {
  const receipt = typeof row.receipt === 'string' ? JSON.parse(row.receipt) : row.receipt;
  return {
    id: String(row.id),
    agentId: String(row.agent_id),
    lamports: BigInt(row.lamports as string),
    at: Number(row.at),
    airdrop: row.signature ? { signature: String(row.signature), blockhash: String(row.blockhash), lastValidBlockHeight: Number(row.last_valid_block_height) } : null,
    receipt: (receipt as FaucetGrant['receipt']) ?? null,
  };
}

/**
 * The faucet's hourly allowance per citizen. A reservation is decided under a per-citizen lock over every grant
 * of the rolling window, those still in flight included, so concurrent requests, on any process, never take more
 * than the allowance between them; a grant whose airdrop failed is released and counts no more.
 */
export class FaucetGrants extends VaultStore {
  protected readonly migrations = migrations;

  private get table(): string {
    return `${this.schema}.faucet_grants`;
  }

  reserve(request: FaucetRequest): Promise<FaucetReservation> {
    const { agentId, idempotencyKey, lamports, capLamports, windowMs, now } = request;
    return this.database.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`faucet:${agentId}`}))`.execute(trx);
      if (idempotencyKey !== undefined) {
        const earlier = await trx.selectFrom(this.table).selectAll().where('agent_id', '=', agentId).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
        if (earlier) return { kind: 'earlier', grant: toGrant(earlier) };
      }
      const inWindow = await trx.selectFrom(this.table).select(['lamports', 'at']).where('agent_id', '=', agentId).where('at', '>', now - windowMs).orderBy('at').execute();
      const used = inWindow.reduce((sum, row) => sum + BigInt(row.lamports as string), 0n);
      if (used + lamports > capLamports) {
        let left = used;
        // Without a grant ageing out before it, the request fits once the whole window has.
        let freesAt = now + windowMs;
        for (const row of inWindow) {
          left -= BigInt(row.lamports as string);
          if (left + lamports <= capLamports) {
            freesAt = Number(row.at) + windowMs;
            break;
          }
        }
        return { kind: 'over', usedLamports: used, freesAt };
      }
      const grant: FaucetGrant = { id: `fct_${newUlid()}`, agentId, lamports, at: now, airdrop: null, receipt: null };
      await trx
        .insertInto(this.table)
        .values({ id: grant.id, agent_id: agentId, idempotency_key: idempotencyKey ?? null, lamports: lamports.toString(), at: now })
        .execute();
      return { kind: 'reserved', grant };
    });
  }

  async accepted(id: string, airdrop: AcceptedAirdrop): Promise<void> {
    await this.database.db
      .updateTable(this.table)
      .set({ signature: airdrop.signature, blockhash: airdrop.blockhash, last_valid_block_height: airdrop.lastValidBlockHeight })
      .where('id', '=', id)
      .execute();
  }

  async recorded(id: string, receipt: { seq: number; hash: string }): Promise<void> {
    await this.database.db.updateTable(this.table).set({ receipt: JSON.stringify(receipt) }).where('id', '=', id).execute();
  }

  /** The airdrop did not happen: its lamports count toward the allowance no more. */
  async release(id: string): Promise<void> {
    await this.database.db.deleteFrom(this.table).where('id', '=', id).execute();
  }
}
