import { CONTENT_ROLES, INTERACTIVE_ROLES, STRUCTURAL_ROLES } from './roles.js';

/**
 * The role snapshot (reference D2): Playwright's ARIA snapshot text with refs (`e1`, `e2`, …)
 * added to the lines the model may act on. A ref resolves back to
 * `getByRole(role, { name, exact: true }).nth(nth)`, so only role, name and occurrence index
 * are kept — no DOM handles, nothing that outlives the page.
 */

export interface RoleSnapshotOptions {
  /** Keep only interactive roles, one flat line each. */
  interactive?: boolean;
  /** Drop unnamed structural lines and containers without refs below them. */
  compact?: boolean;
  /** Drop lines deeper than this (depth 0 = top level). */
  maxDepth?: number;
}

export interface RoleRef {
  role: string;
  /** The accessible name; absent for unnamed elements (they resolve to an empty-name match). */
  name?: string;
  /** 0-based index among elements of the same role and name; absent when there is only one. */
  nth?: number;
}

export interface RoleSnapshot {
  snapshot: string;
  refs: Record<string, RoleRef>;
  stats: { lines: number; chars: number; refs: number; interactive: number };
}

/** One `- role "name" suffix` line of the ARIA text. */
interface ElementLine {
  depth: number;
  /** Indentation and `- `. */
  prefix: string;
  /** The role as written (compared lower-cased). */
  role: string;
  /** The name as written between the quotes (still escaped), and its value. */
  quotedName?: string;
  name?: string;
  /** Attributes and the rest: ` [level=1]`, `:`, `: text`. */
  suffix: string;
}

// The rest starts at a non-space: `(.*)` right after `\s+` would be retried at every space of a
// long run in a page's text before a line separator fails `$`.
const LINE = /^(\s*-\s+)((?:\S.*)?)$/;
const ROLE_AND_NAME = /^(\w+)(?:\s+"((?:[^"\\]|\\.)*)")?(.*)$/s;

export const depthOf = (line: string): number => Math.floor((/^\s*/.exec(line)?.[0].length ?? 0) / 2);

/**
 * Parses an element line. Playwright writes a key that YAML would misread in single quotes
 * (`- 'button "Save: now"'`, `''` for a quote) and escapes quotes in names (`"Say \"hi\""`);
 * both are understood here, where the reference's plain pattern would lose the name.
 */
export function parseElementLine(line: string): ElementLine | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const prefix = m[1]!;
  let rest = m[2]!;
  let after = '';
  if (rest.startsWith("'")) {
    let end = -1;
    for (let i = 1; i < rest.length; i++) {
      if (rest[i] !== "'") continue;
      if (rest[i + 1] === "'") {
        i++;
        continue;
      }
      end = i;
      break;
    }
    if (end < 0) return undefined;
    after = rest.slice(end + 1);
    rest = rest.slice(1, end).replace(/''/g, "'");
  }
  const k = ROLE_AND_NAME.exec(rest);
  if (!k) return undefined;
  const quotedName = k[2];
  return {
    depth: depthOf(line),
    prefix,
    role: k[1]!,
    ...(quotedName !== undefined ? { quotedName, name: unescapeName(quotedName) } : {}),
    suffix: k[3]! + after,
  };
}

function unescapeName(quoted: string): string {
  try {
    return JSON.parse(`"${quoted}"`) as string;
  } catch {
    return quoted;
  }
}

const keyOf = (role: string, name: string | undefined) => `${role}\u0000${name ?? ''}`;

/** Whether a line of this role and name gets a ref (D2). */
export function getsRef(role: string, name: string | undefined): boolean {
  return INTERACTIVE_ROLES.has(role) || (CONTENT_ROLES.has(role) && !!name);
}

/**
 * Builds the role snapshot. Occurrence indexes (`nth`) count every line of the ARIA text,
 * including those `maxDepth` drops, so that `nth` always matches what `getByRole` finds on the
 * page (the reference counts only kept lines, which can point a ref at the wrong duplicate).
 */
export function buildRoleSnapshot(aria: string, options: RoleSnapshotOptions = {}): RoleSnapshot {
  const refs: Record<string, RoleRef> = {};
  const seen = new Map<string, number>();
  const refKeys = new Map<string, string>();
  const out: string[] = [];
  let counter = 0;

  for (const line of aria.split('\n')) {
    if (line.trim() === '') continue;
    const el = parseElementLine(line);
    const tooDeep = options.maxDepth !== undefined && depthOf(line) > options.maxDepth;
    if (!el) {
      if (!options.interactive && !tooDeep) out.push(line);
      continue;
    }
    const role = el.role.toLowerCase();
    const named = el.name !== undefined && el.name !== '';
    const withRef = getsRef(role, el.name);
    let nth = 0;
    if (withRef) {
      const key = keyOf(role, named ? el.name : undefined);
      nth = seen.get(key) ?? 0;
      seen.set(key, nth + 1);
    }
    if (tooDeep) continue;
    if (options.interactive && !INTERACTIVE_ROLES.has(role)) continue;
    if (options.compact && STRUCTURAL_ROLES.has(role) && !named) continue;
    if (!withRef) {
      out.push(line);
      continue;
    }
    const ref = `e${++counter}`;
    refs[ref] = { role, ...(named ? { name: el.name } : {}), nth };
    refKeys.set(ref, keyOf(role, named ? el.name : undefined));
    const head = `${el.role}${el.quotedName !== undefined ? ` "${el.quotedName}"` : ''} [ref=${ref}]${nth > 0 ? ` [nth=${nth}]` : ''}`;
    if (options.interactive) out.push(`- ${head}${el.suffix.includes('[') ? el.suffix : ''}`);
    else out.push(`${el.prefix}${head}${el.suffix}`);
  }

  // nth only where the key really repeats; a lone element resolves without it.
  for (const [ref, key] of refKeys) if ((seen.get(key) ?? 0) <= 1) delete refs[ref]!.nth;

  let lines = out;
  if (options.compact && !options.interactive) lines = compactLines(out);
  const snapshot = lines.length > 0 ? lines.join('\n') : options.interactive ? '(no interactive elements)' : '(empty)';
  const interactive = Object.values(refs).filter((r) => INTERACTIVE_ROLES.has(r.role)).length;
  return { snapshot, refs, stats: { lines: lines.length, chars: snapshot.length, refs: counter, interactive } };
}

/**
 * Compact post-pass: lines with a ref and text lines (`role: text`) stay; a container
 * (`…:`) stays only when a deeper line before its next sibling has a ref.
 */
function compactLines(lines: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.includes('[ref=') || (line.includes(':') && !line.trimEnd().endsWith(':'))) {
      kept.push(line);
      continue;
    }
    const depth = depthOf(line);
    for (let j = i + 1; j < lines.length && depthOf(lines[j]!) > depth; j++) {
      if (lines[j]!.includes('[ref=')) {
        kept.push(line);
        break;
      }
    }
  }
  return kept;
}

/**
 * Reads a ref as the model may write it: `e12`, `E12`, `@e12` or `ref=e12`. Numeric refs of
 * Playwright's own AI snapshots are not issued by Warden, so they are refused.
 */
export function parseRoleRef(text: string): string | undefined {
  const m = /^(?:@|ref=)?(e[1-9]\d{0,8})$/i.exec(text.trim());
  return m ? m[1]!.toLowerCase() : undefined;
}

/** Cuts a snapshot at `maxChars` on a line boundary, so no ref is left half-printed. */
export function truncateSnapshot(snapshot: string, maxChars: number): { text: string; truncated: boolean } {
  if (snapshot.length <= maxChars) return { text: snapshot, truncated: false };
  const cut = snapshot.lastIndexOf('\n', maxChars);
  const head = cut > 0 ? snapshot.slice(0, cut) : '';
  return { text: `${head}\n[...TRUNCATED - page too large; take a snapshot with interactive, compact, depth or selector]`, truncated: true };
}
