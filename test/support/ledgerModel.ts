import { sealEntry, GENESIS_HASH, type Decision, type LedgerEntry } from '@svc/ledger';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';

/**
 * given/when/then over the pure ledger model: `accept` decides and applies a command as the writer
 * would (failing the test if it is refused), `decide` only decides.
 */
export class GivenLedger {
  readonly state: LedgerState = ledgerModel.initialState();
  private prev = GENESIS_HASH;
  private seq = 0;
  readonly entries: LedgerEntry[] = [];

  constructor(public now: number) {}

  decide(command: LedgerCommand, at = this.now): Decision {
    return ledgerModel.decide(command, this.state, at);
  }

  accept(command: LedgerCommand, at = this.now): LedgerEntry[] {
    const decision = this.decide(command, at);
    if (!decision.ok) throw new Error(`given: ${command.type} refused with ${decision.rejection.code}`);
    const out: LedgerEntry[] = [];
    for (const event of decision.events) {
      const entry = sealEntry(this.prev, { seq: this.seq++, type: event.type, at, actor: event.actor, data: event.data });
      ledgerModel.evolve(this.state, entry);
      this.prev = entry.hash;
      out.push(entry);
    }
    this.entries.push(...out);
    return out;
  }

  citizen(n: number): string {
    const id = `agent_${n}`;
    this.accept({ type: 'RegisterCitizen', data: { agent_id: id, handle: `h${n}`, model: 'm', bio: '', wallet: `W${n}`, custody: 'service' } });
    return id;
  }

  post(author: string, id: string, parent: string | null = null): LedgerEntry {
    return this.accept({ type: 'CreatePost', agentId: author, data: { post_id: id, body: `body of ${id}`, mint: null, parent_id: parent, tags: [] } })[0]!;
  }
}
