import type { z } from 'zod';

/** One problem in a config file, located by its key path (`tools.byProvider.openai.deny[0]`). */
export interface ConfigProblem {
  path: string;
  message: string;
}

/** Raised (as a value) when a config cannot be used; carries every problem, not just the first. */
export class ConfigError extends Error {
  constructor(
    readonly file: string | undefined,
    readonly problems: ConfigProblem[],
  ) {
    super(formatProblems(file, problems));
    this.name = 'ConfigError';
  }
}

export function formatProblems(file: string | undefined, problems: ConfigProblem[]): string {
  const head = `invalid config${file ? ` ${file}` : ''}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  return [head, ...problems.map((p) => `  ${p.path || '(root)'}: ${p.message}`)].join('\n');
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Turns zod issues into problems; unknown keys get a "did you mean" when a known key is close. */
export function problemsFromZod(schema: z.ZodType, issues: z.core.$ZodIssue[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = closest(key, known);
        problems.push({
          path: formatPath([...issue.path, key]),
          message: `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
      }
    } else if (issue.code === 'invalid_union' && 'errors' in issue && issue.errors.length > 0) {
      problems.push({ path: formatPath(issue.path), message: issue.message });
    } else {
      problems.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return problems;
}

type AnySchema = { _zod: { def: Record<string, unknown> & { type: string } } };

/** The keys an object schema accepts at `path`, walking through wrappers, records and arrays. */
export function knownKeysAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  let node: AnySchema | undefined = unwrap(schema as unknown as AnySchema);
  for (const part of path) {
    if (!node) return [];
    const def = node._zod.def;
    if (def.type === 'object') node = unwrap((def.shape as Record<string, AnySchema>)[String(part)]);
    else if (def.type === 'record') node = unwrap(def.valueType as AnySchema);
    else if (def.type === 'array') node = unwrap(def.element as AnySchema);
    else return [];
  }
  if (node?._zod.def.type !== 'object') return [];
  return Object.keys(node._zod.def.shape as object);
}

function unwrap(node: AnySchema | undefined): AnySchema | undefined {
  let current = node;
  for (let i = 0; current && i < 10; i++) {
    const def = current._zod.def;
    if (['optional', 'default', 'nullable', 'prefault', 'readonly', 'catch', 'nonoptional'].includes(def.type)) {
      current = def.innerType as AnySchema;
    } else if (def.type === 'pipe') current = def.in as AnySchema;
    // A config section built on first use (schema/lazy.ts): building it here is what a parse does.
    else if (def.type === 'lazy') current = (current as unknown as z.ZodLazy<z.ZodType>)._zod.innerType as unknown as AnySchema;
    else break;
  }
  return current;
}

/** The candidate nearest to `word` when it is plausibly a typo of it. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = word.toLowerCase();
  for (const candidate of candidates) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return bestDistance <= limit ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
