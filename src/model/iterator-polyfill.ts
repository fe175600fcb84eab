/**
 * Iterator helpers (`iterator.map`, `.filter`, ...) arrived in Node 22; jax-js's einsum parser
 * (used by einsum and nn.dotProductAttention) calls `matchAll(...).map`. Installed by initEngine,
 * only for the methods the runtime lacks.
 */
type AnyIterator = Iterator<unknown> & { [Symbol.iterator](): AnyIterator };

const helpers: Record<string, (this: AnyIterator, ...args: never[]) => unknown> = {
  *map(this: AnyIterator, fn: (value: unknown, index: number) => unknown) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) yield fn(value, i++);
  },
  *filter(this: AnyIterator, fn: (value: unknown, index: number) => boolean) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) if (fn(value, i++)) yield value;
  },
  *flatMap(this: AnyIterator, fn: (value: unknown, index: number) => Iterable<unknown>) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) yield* fn(value, i++);
  },
  toArray(this: AnyIterator) {
    return Array.from({ [Symbol.iterator]: () => this });
  },
  forEach(this: AnyIterator, fn: (value: unknown, index: number) => void) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) fn(value, i++);
  },
  some(this: AnyIterator, fn: (value: unknown, index: number) => boolean) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) if (fn(value, i++)) return true;
    return false;
  },
  every(this: AnyIterator, fn: (value: unknown, index: number) => boolean) {
    let i = 0;
    for (const value of { [Symbol.iterator]: () => this }) if (!fn(value, i++)) return false;
    return true;
  },
};

/** Adds the missing helpers to %IteratorPrototype%; returns the names it added. */
export function installIteratorHelpers(): string[] {
  const iteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())) as object;
  const added: string[] = [];
  for (const [name, fn] of Object.entries(helpers)) {
    if (name in iteratorPrototype) continue;
    Object.defineProperty(iteratorPrototype, name, { value: fn, writable: true, configurable: true });
    added.push(name);
  }
  return added;
}
