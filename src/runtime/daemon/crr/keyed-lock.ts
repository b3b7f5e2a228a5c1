/**
 * One holder per key at a time, in arrival order; different keys run in parallel. The CRR work queue already gives
 * a key to one worker at a time; this lets work that must not wait for a free worker (the node-local stop on a
 * container exit) take the same key's turn directly.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier holder of `key` has finished. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before ? before.then(() => mine) : mine;
    this.tails.set(key, tail);
    if (before) await before;
    try {
      return await fn();
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
