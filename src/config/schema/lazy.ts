import * as z from 'zod';

/**
 * A config schema built on first use. Building the whole config schema at import costs a
 * command that answers and exits a large share of its start-up (some 1,750 zod objects), while
 * one parse reads only the sections the file has. Each section is therefore built the first
 * time a parse reaches it (or `z.toJSONSchema` walks it), once, and behaves as if built eagerly:
 * the same issues, messages and key paths.
 *
 * zod asks a field whether it is optional (`optin`/`optout`) when the enclosing object is first
 * parsed, which would build every section at once; a lazy section answers "required" itself.
 * That is only true of a schema that is neither optional nor defaulted, so the built schema is
 * checked: wrapping one that is would change how absent keys parse, and is refused loudly.
 */
export function lazySchema<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  let built: T | undefined;
  const schema = z.lazy(() => {
    if (built) return built;
    const inner = build();
    if (inner._zod.optin !== undefined || inner._zod.optout !== undefined) {
      throw new Error('lazySchema: the built schema is optional or defaulted; wrap the schema before .optional()/.default()');
    }
    return (built = inner);
  });
  for (const key of ['optin', 'optout'] as const) Object.defineProperty(schema._zod, key, { value: undefined, writable: true, configurable: true });
  return schema;
}

/**
 * A piece of a schema (a field type, a set of fields) shared by several sections, built the
 * first time a section that uses it is built, then the same object for all of them: one
 * instance, as a module constant would be, without the cost at import.
 */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
