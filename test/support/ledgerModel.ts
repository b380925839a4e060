import { sealEntry, GENESIS_HASH, type CommandOutcome, type Decision, type LedgerEntry } from '@svc/ledger';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';

/** RegisterCitizen for `agent_<n>`, custody=service: handle `h<n>` and wallet `W<n>` unless given. */
export function registerCitizenCommand(n: number | string, handle = `h${n}`, more: { bio?: string; wallet?: string } = {}): LedgerCommand {
  return { type: 'RegisterCitizen', data: { agent_id: `agent_${n}`, handle, model: 'm', bio: more.bio ?? '', wallet: more.wallet ?? `W${n}`, custody: 'service' } };
}

/** A post by `agent_<author>` tagged `t`, a reply when `parent` is given. */
export function postCommand(author: number | string, id: string, parent: string | null = null): LedgerCommand {
  return { type: 'CreatePost', agentId: `agent_${author}`, data: { post_id: id, body: `body of ${id}`, mint: null, parent_id: parent, tags: ['t'] } };
}

export function voteCommand(voter: number | string, postId: string, value: 1 | -1): LedgerCommand {
  return { type: 'CastVote', agentId: `agent_${voter}`, data: { post_id: postId, value } };
}

interface CommandWriter {
  execute(command: LedgerCommand): Promise<CommandOutcome>;
}

/** Writes `commands` one after another, each decided on what the one before left; a refusal fails the set-up. */
export async function executeInOrder(writer: CommandWriter, commands: LedgerCommand[]): Promise<void> {
  for (const command of commands) {
    const outcome = await writer.execute(command);
    if (!outcome.ok) throw new Error(`setup: ${command.type} refused: ${JSON.stringify(outcome.rejection)}`);
  }
}

/** Writes `commands` all at once, as concurrent requests would (the writer commits them in shared appends); a refusal fails the set-up. */
export async function executeAtOnce(writer: CommandWriter, commands: LedgerCommand[]): Promise<void> {
  const outcomes = await Promise.all(commands.map((command) => writer.execute(command)));
  const refused = outcomes.find((outcome) => !outcome.ok);
  if (refused && !refused.ok) throw new Error(`setup refused: ${JSON.stringify(refused.rejection)}`);
}

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
    this.accept(registerCitizenCommand(n));
    return id;
  }

  post(author: string, id: string, parent: string | null = null): LedgerEntry {
    return this.accept({ type: 'CreatePost', agentId: author, data: { post_id: id, body: `body of ${id}`, mint: null, parent_id: parent, tags: [] } })[0]!;
  }
}
