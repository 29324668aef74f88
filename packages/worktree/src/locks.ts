/**
 * Named locks: callers of one key run one at a time, in arrival order. The worker takes the
 * worktree's key for every change to one worktree and the repository's key for what spans a
 * repository (creating against the budget, landing: one land per repository at a time).
 */
export class Locks {
  private readonly tails = new Map<string, Promise<void>>();

  async with<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await run();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Whether someone holds or waits for `key`. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }
}
