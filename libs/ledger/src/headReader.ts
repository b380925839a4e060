/**
 * The stored ledger head for many concurrent readers, one store read at a time (a group read, as the
 * writer's group commit). A caller must see every write that committed before it asked, so it never takes
 * a read that started before it arrived: while one is in flight, callers wait for the next, which starts
 * when it ends and serves all of them. However many requests ask, the store sees about one read per round
 * trip, and no caller waits more than two.
 */
export class HeadReader {
  private inFlight?: Promise<number>;
  private next?: Promise<number>;

  constructor(private readonly read: () => Promise<number>) {}

  head(): Promise<number> {
    if (!this.inFlight) return this.start();
    this.next ??= this.inFlight.then(
      () => this.start(),
      () => this.start(),
    );
    return this.next;
  }

  private start(): Promise<number> {
    this.next = undefined;
    const read = this.read();
    this.inFlight = read;
    const done = () => {
      if (this.inFlight === read) this.inFlight = undefined;
    };
    read.then(done, done);
    return read;
  }
}
