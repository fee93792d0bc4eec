import { isSchema, mapSubschemas, type Schema } from './walk.js';

/** Deeper than this a ref chain is treated like a recursive one (guards exponential blow-up). */
const MAX_REF_DEPTH = 32;

/**
 * Inlines local `$ref`s (`#/$defs/…`, `#/definitions/…`, any JSON pointer into the schema).
 * A recursive ref becomes `{}` (accept anything): models cannot follow cycles. Definition
 * blocks are dropped unless some ref could not be resolved; those refs are reported.
 */
export function inlineRefs(root: Schema, options: { maxNodes?: number } = {}): { schema: Schema; unresolved: string[] } {
  const unresolved: string[] = [];
  // Refs fan out: a schema from outside (an MCP server's) can ask for 2^32 copies in a few lines.
  let budget = options.maxNodes ?? Number.POSITIVE_INFINITY;
  const visit = (node: Schema, stack: string[]): Schema => {
    if (--budget < 0) throw new SchemaTooLargeError(options.maxNodes!);
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const { $ref: _drop, ...siblings } = node;
      if (stack.includes(ref) || stack.length >= MAX_REF_DEPTH) return visit(siblings, stack);
      const target = resolvePointer(root, ref);
      if (!target) {
        unresolved.push(ref);
        return mapSubschemas(node, (c) => visit(c, stack));
      }
      // Keywords beside a $ref (a description, say) refine the target.
      return { ...visit(target, [...stack, ref]), ...visit(siblings, stack) };
    }
    return mapSubschemas(node, (c) => visit(c, stack));
  };
  const inlined = visit(root, []);
  if (unresolved.length === 0) {
    delete inlined.$defs;
    delete inlined.definitions;
    delete inlined.components;
  }
  return { schema: inlined, unresolved: [...new Set(unresolved)] };
}

function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
    if (node === undefined) return undefined;
  }
  return isSchema(node) ? node : undefined;
}

/** Inlining would make more than `maxNodes` schema nodes. */
export class SchemaTooLargeError extends Error {
  constructor(readonly maxNodes: number) {
    super(`schema expands to more than ${maxNodes} nodes once its $refs are inlined`);
  }
}
