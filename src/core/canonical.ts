/** A value with every object's keys sorted, so equal data stringifies equally whatever order its keys came in. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** `value` as JSON with sorted keys: equal data gives equal text (a map key, an equality test). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}
