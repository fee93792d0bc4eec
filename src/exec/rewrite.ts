import type { ChainOperator } from './analysis.js';

/**
 * The enforced rewrite (reference A11): an allowlisted command runs as what was judged, not as
 * the text the model sent. Chain operators and pipes stay; each segment becomes its effective
 * argv (dispatch wrappers removed) with argv[0] replaced by the resolved path, and every token
 * single-quoted so the shell expands nothing. Pure.
 */
export interface RewriteSegment {
  /** Effective argv, argv[0] already replaced by the resolved path (or kept for builtins). */
  argv: readonly string[];
}

export interface RewritePart {
  op: ChainOperator | null;
  pipeline: readonly RewriteSegment[];
}

export function shellQuote(token: string): string {
  return `'${token.replace(/'/g, `'"'"'`)}'`;
}

export function buildEnforcedCommand(parts: readonly RewritePart[]): string {
  let out = '';
  for (const part of parts) {
    const pipeline = part.pipeline.map((segment) => segment.argv.map(shellQuote).join(' ')).join(' | ');
    out += part.op === null ? pipeline : ` ${part.op} ${pipeline}`;
  }
  return out;
}
