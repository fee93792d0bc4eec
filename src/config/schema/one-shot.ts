import * as z from 'zod';

/**
 * For a command that answers and exits: zod compiles a fast path for each object schema at its
 * first parse (generated code, compiled by V8), which pays off over many parses of one schema,
 * never over the one or two a command makes of each section. Without it the parse reads the
 * same schema the same way (zod's own slow path, the one it takes wherever code generation is
 * refused); the results and issues are the same. A long-running process keeps the fast path.
 */
export function parseWithoutCodeGeneration(): void {
  z.config({ jitless: true });
}
