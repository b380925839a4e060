/** Blockhashes stay valid for 150 blocks, as on mainnet; LiteSVM itself only knows its newest one. */
export const BLOCKHASH_VALIDITY = 150;

export class BlockhashWindow {
  private readonly hashes = new Map<string, number>();

  add(hash: string, lastValidBlockHeight: number): void {
    this.hashes.set(hash, lastValidBlockHeight);
  }

  isValid(hash: string, blockHeight: number): boolean {
    const lastValid = this.hashes.get(hash);
    return lastValid !== undefined && lastValid >= blockHeight;
  }

  lastValidBlockHeight(hash: string): number | undefined {
    return this.hashes.get(hash);
  }

  prune(blockHeight: number): void {
    for (const [hash, lastValid] of this.hashes) {
      if (lastValid >= blockHeight) break;
      this.hashes.delete(hash);
    }
  }

  toJSON(): [string, number][] {
    return [...this.hashes];
  }

  static from(entries: [string, number][]): BlockhashWindow {
    const window = new BlockhashWindow();
    for (const [hash, lastValid] of entries) window.add(hash, lastValid);
    return window;
  }
}
