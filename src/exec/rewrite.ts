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
  /**
   * Heredocs: the argv tokens (`start`, `count`) that were the operator are emitted as the
   * operator text, and the bodies follow the command line in order, as sh reads them.
   */
  heredocs?: readonly RewriteHeredoc[];
}

export interface RewriteHeredoc {
  start: number;
  count: number;
  operator: string;
  body: string;
}

export interface RewritePart {
  op: ChainOperator | null;
  pipeline: readonly RewriteSegment[];
}

export function shellQuote(token: string): string {
  return token.includes("'") ? `'${token.replace(/'/g, `'"'"'`)}'` : `'${token}'`;
}

/**
 * An argv as a person reads it on a card or in `exec-check`: words joined by spaces, a word that
 * is empty or holds whitespace or a quote shown quoted (`rm -rf build/ ''`), so an empty
 * argument cannot hide at the end of a line or between two spaces.
 */
export function showArgv(argv: readonly string[]): string {
  return argv.map((w) => (w === '' || /[\s'"\\]/.test(w) ? shellQuote(w) : w)).join(' ');
}

export function buildEnforcedCommand(parts: readonly RewritePart[]): string {
  let out = '';
  // Collected and joined once: a command may carry thousands of heredoc bodies.
  const bodies: string[] = [];
  const addBody = (body: string) => {
    bodies.push(body);
  };
  for (const part of parts) {
    const pipeline = part.pipeline.map((segment) => emitSegment(segment, addBody)).join(' | ');
    out += part.op === null ? pipeline : ` ${part.op} ${pipeline}`;
  }
  const text = bodies.join('');
  return text === '' ? out : `${out}\n${text}`;
}

function emitSegment(segment: RewriteSegment, addBody: (body: string) => void): string {
  // The common case in one join: no heredoc, no word holding a quote (each word is `'word'`).
  if (segment.argv.length > 0 && (segment.heredocs ?? []).length === 0 && !segment.argv.some((word) => word.includes("'"))) return `'${segment.argv.join("' '")}'`;
  // Heredocs sorted by position, walked with one index: no lookup per word of a long argv.
  const heredocs = [...(segment.heredocs ?? [])].sort((a, b) => a.start - b.start);
  let next = 0;
  let out = '';
  for (let k = 0; k < segment.argv.length; k++) {
    while (next < heredocs.length && heredocs[next]!.start < k) next++;
    // Of two at one position the last counts, as it always has.
    while (next + 1 < heredocs.length && heredocs[next + 1]!.start === k) next++;
    const doc = heredocs[next]?.start === k ? heredocs[next] : undefined;
    if (k > 0) out += ' ';
    if (doc) {
      out += doc.operator;
      addBody(doc.body);
      k += doc.count - 1;
      next++;
    } else out += shellQuote(segment.argv[k]!);
  }
  return out;
}
