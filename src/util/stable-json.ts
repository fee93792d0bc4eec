/**
 * JSON with object keys sorted, so equal values give equal text: call identities, grant
 * arguments, snapshot fingerprints. `undefined` at the top becomes the text "undefined".
 */
export function stableJson(value: unknown): string {
  return (
    JSON.stringify(value, (_k, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}
