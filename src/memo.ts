/**
 * Bounded memory of answers by key: LruMap, and boundedMemo for a function's answers.
 */

/** What an entry of an LruOrder links to: the entries used just after and just before it. */
export interface LruLinks<N> {
  newer: N | null;
  older: N | null;
}

/**
 * The order of use of a cache's entries, as a list linked through the entries themselves: every
 * operation is O(1), and the cache finds its entries however it likes (LruMap: by their key; the
 * engine's kept decisions: by a short key, then field by field).
 */
export class LruOrder<N extends LruLinks<N>> {
  newest: N | null = null;
  oldest: N | null = null;

  /** Adds `node`, or moves it, to the newest end. */
  makeNewest(node: N): void {
    if (this.newest === node) return;
    this.unlink(node);
    node.older = this.newest;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
  }

  unlink(node: N): void {
    if (node.newer) node.newer.older = node.older;
    else if (this.newest === node) this.newest = node.older;
    if (node.older) node.older.newer = node.newer;
    else if (this.oldest === node) this.oldest = node.newer;
    node.newer = null;
    node.older = null;
  }

  clear(): void {
    this.newest = null;
    this.oldest = null;
  }
}

interface LruNode<K, V> extends LruLinks<LruNode<K, V>> {
  key: K;
  value: V;
}

/**
 * A map of at most `max` entries: past that, the least recently used goes (a get or a set uses
 * an entry). The order is a linked list beside the Map (LruOrder), so every operation is O(1). A
 * Map alone (delete and set again on every use, drop the first key) is not: each delete leaves a
 * hole at the front of V8's table until it is rehashed, and finding the first key steps over all
 * of them, which at tens of thousands of entries cost tens of µs per eviction.
 */
export class LruMap<K, V> {
  private readonly nodes = new Map<K, LruNode<K, V>>();
  private readonly order = new LruOrder<LruNode<K, V>>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (!node) return undefined;
    this.order.makeNewest(node);
    return node.value;
  }

  set(key: K, value: V): void {
    const node = this.nodes.get(key);
    if (node) {
      node.value = value;
      this.order.makeNewest(node);
      return;
    }
    if (this.nodes.size >= this.max && this.order.oldest) this.delete(this.order.oldest.key);
    const added: LruNode<K, V> = { key, value, newer: null, older: null };
    this.nodes.set(key, added);
    this.order.makeNewest(added);
  }

  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (!node) return false;
    this.order.unlink(node);
    this.nodes.delete(key);
    return true;
  }

  clear(): void {
    this.nodes.clear();
    this.order.clear();
  }

  get size(): number {
    return this.nodes.size;
  }

  /** The keys from the least to the most recently used. */
  *keys(): IterableIterator<K> {
    for (let node = this.order.oldest; node; node = node.newer) yield node.key;
  }
}

/**
 * A function's answers remembered by their key, at most `max` of them: past that, the least
 * recently used goes. What is remembered is what the function answered, so it must answer a key
 * the same every time. A null answer is not remembered (a forged session cookie is checked again
 * on every request), and neither is a throw.
 */
export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const answers = new LruMap<string, V>(max);
  return (key) => {
    const remembered = answers.get(key);
    if (remembered !== undefined) return remembered;
    const answer = compute(key);
    if (answer !== null && answer !== undefined) answers.set(key, answer);
    return answer;
  };
}
