/** Stands for "no entry is known to be the newest". */
const NONE: unique symbol = Symbol('none');

/**
 * A map of at most `capacity` entries (or entries weighing at most that together, by `weigh`) that
 * lets go of the least recently used first: what the service keeps in a process (prepared
 * statements by text, kept picks, the SQL parser's verdicts, credentials seen lately, records'
 * texts) is bounded this way, so that no caller can grow it. A Map iterates in insertion order, so
 * an entry read or written is moved to the end and the first is the oldest.
 */
export class RecentlyUsed<K, V> {
  private readonly entries = new Map<K, V>();
  private weight = 0;
  /**
   * The key last read or written: the map's last entry, unless it has since been let go (then a
   * read of it finds nothing, and only a write brings it back, as the newest). Read again (a hot
   * key is, request after request), it is not moved: deleting and adding it back costs the map a
   * hole each time.
   */
  private newest: K | typeof NONE = NONE;

  constructor(
    readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** The value under `key`, now the most recently used; undefined when there is none. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    // (A value may itself be undefined: only then is the key looked up again.)
    if (value === undefined && !this.entries.has(key)) return undefined;
    if (key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value as V);
      this.newest = key;
    }
    return value;
  }

  /** Keeps `value` under `key` as the most recently used, letting go of the oldest past capacity. */
  set(key: K, value: V): void {
    this.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    this.weight += this.weigh(value);
    for (const oldest of this.entries.keys()) {
      if (this.weight <= this.capacity) break;
      this.delete(oldest);
    }
  }

  delete(key: K): void {
    if (!this.entries.has(key)) return;
    this.weight -= this.weigh(this.entries.get(key) as V);
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }
}

/**
 * A RecentlyUsed map for each owner (a database client's reads: what is kept for one database is
 * never another's answer), made on its first use and let go with its owner.
 */
export class KeptPerOwner<K, V> {
  private readonly maps = new WeakMap<object, RecentlyUsed<K, V>>();

  constructor(
    private readonly capacity: number,
    private readonly weigh?: (value: V) => number,
  ) {}

  of(owner: object): RecentlyUsed<K, V> {
    let kept = this.maps.get(owner);
    if (kept === undefined) {
      kept = new RecentlyUsed(this.capacity, this.weigh);
      this.maps.set(owner, kept);
    }
    return kept;
  }
}
