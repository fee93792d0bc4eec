import { createRequire } from 'node:module';
import { ECMA_SPACE_RANGES } from './ecma-space.js';
import type { RE2JS } from 're2js';
import type { AstNode, CharacterClass, CharacterClassBody, RootNode, parse as Parse } from 'regjsparser';

/** The syntax read: ES2018+ (named groups, lookbehind parsed to be refused, \\p{…} with `u`). */
type Syntax = { lookbehind: true; namedGroups: true; unicodePropertyEscape: true };

/**
 * Regular expressions someone else wrote (an operator's exec `argPattern`, an MCP server's JSON
 * Schema `pattern`, a plugin's rules), run against text the model controls. V8's own engine
 * backtracks: `^git (-+)+x$` against one 32 KiB argument runs for minutes and blocks every
 * conversation on the event loop. These patterns are read with JavaScript's syntax and meaning,
 * translated to an equivalent RE2 program and matched by a linear-time engine (re2js), under a
 * work budget per match. A pattern no linear engine can run (lookaround, backreference) is
 * refused with the reason; it never falls back to backtracking.
 *
 * Meaning kept exactly as JavaScript's: `.` (no `\n \r \u2028 \u2029` without `s`), `\s` (the
 * ECMAScript white-space set), `\d \w \b` (ASCII), `i` (ECMAScript case canonicalisation, computed
 * here, not RE2's folding), and without `u` a string is a sequence of UTF-16 code units (each
 * surrogate is matched alone, as V8 does). Tested against V8 over a generated corpus.
 */

/** The flags a caller may ask for: `u` for JSON Schema patterns, `i` for case-blind rules. */
export type LinearFlags = '' | 'i' | 'u' | 's' | 'is' | 'us';

export interface LinearRegex {
  readonly source: string;
  readonly flags: LinearFlags;
  /** The longest text this pattern is matched against; longer text is `too-long`, never matched. */
  readonly maxInput: number;
  /** true/false as `new RegExp(source, flags).test(text)` would answer, or `too-long`. */
  test(text: string): boolean | 'too-long';
}

/** A refusal says why; `syntax` when V8 itself does not read the pattern with these flags. */
export type LinearCompile = { ok: true; regex: LinearRegex } | { ok: false; error: string; syntax: boolean };

/**
 * Work budget of one match: instructions of the compiled program × characters of text. re2js's
 * slowest path here (its NFA with every thread alive) measured up to ~35 ns per
 * instruction-character, so the budget holds one match to about 5 ms of the event loop
 * (`bench/run.ts regex` prints the figures). Text past the budget is never matched.
 */
export const LINEAR_WORK_MAX = 131_072;
/** A pattern's program may hold at most this many instructions (a larger one is refused at load). */
export const LINEAR_PROGRAM_MAX = 1_024;

/**
 * The parser and the engine load on the first pattern compiled, not with every module that may
 * compile one (the config schema does, and most commands never meet a regex). Both are read as
 * CommonJS: regjsparser is a UMD file in which Node's ESM loader sees no named exports.
 */
let loaded: { RE2JS: typeof RE2JS; parse: typeof Parse } | undefined;
function engine(): { RE2JS: typeof RE2JS; parse: typeof Parse } {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    loaded = { RE2JS: (require('re2js') as { RE2JS: typeof RE2JS }).RE2JS, parse: (require('regjsparser') as { parse: typeof Parse }).parse };
  }
  return loaded;
}

const CACHE_MAX = 2_000;
const cache = new Map<string, LinearCompile>();

export function compileLinearRegex(source: string, flags: LinearFlags = ''): LinearCompile {
  const key = `${flags}/${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const result = compileUncached(source, flags);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, result);
  return result;
}

/** Why a pattern cannot be used, or undefined when it can (for config validation). */
export function linearRegexProblem(source: string, flags: LinearFlags = ''): string | undefined {
  const compiled = compileLinearRegex(source, flags);
  return compiled.ok ? undefined : compiled.error;
}

class Refused extends Error {}

function compileUncached(source: string, flags: LinearFlags): LinearCompile {
  // The pattern must first be one V8 accepts: the meaning kept is JavaScript's.
  try {
    new RegExp(source, flags);
  } catch (err) {
    return { ok: false, syntax: true, error: `not a regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}` };
  }
  const unicode = flags.includes('u');
  const mode: Mode = { unicode, ignoreCase: flags.includes('i'), dotAll: flags.includes('s') };
  const { RE2JS, parse } = engine();
  let translated: string;
  try {
    const ast = parse<Syntax>(source, unicode ? 'u' : '', { lookbehind: true, namedGroups: true, unicodePropertyEscape: unicode } as Syntax);
    translated = emit(ast, mode);
  } catch (err) {
    if (err instanceof Refused) return { ok: false, syntax: false, error: err.message };
    return { ok: false, syntax: false, error: `cannot be read: ${(err as Error).message.split('\n')[0]}` };
  }
  let program: RE2JS;
  try {
    program = RE2JS.compile(translated, RE2JS.DOTALL);
  } catch (err) {
    return { ok: false, syntax: false, error: `too complex for the linear-time engine (${(err as Error).message.replace(/^error parsing regexp: /, '')})` };
  }
  const size = program.programSize();
  if (size > LINEAR_PROGRAM_MAX) {
    return { ok: false, syntax: false, error: `too large: ${size.toLocaleString('en-US')} instructions once compiled, at most ${LINEAR_PROGRAM_MAX.toLocaleString('en-US')} (smaller repetition counts or fewer alternatives)` };
  }
  disableDfa(program);
  const maxInput = Math.floor(LINEAR_WORK_MAX / Math.max(1, size));
  const regex: LinearRegex & { program: RE2JS } = {
    program,
    source,
    flags,
    maxInput,
    test(text) {
      if (text.length > maxInput) return 'too-long';
      return program.test(unicode ? text : unitsAsCodePoints(text));
    },
  };
  return { ok: true, regex };
}

/**
 * re2js tries a lazily built DFA first. Text that keeps reaching new DFA states (an attacker's
 * text against `a[ab]{20}c`, say) makes it build and throw away states at up to ~500 ns per
 * instruction-character, an order slower than its NFA, and each pattern's state cache may grow to
 * 8 MiB. Its other engines (literal prefilter, one-pass, bit-state backtracker, NFA) are linear
 * with a small constant, so the DFA is switched off: the library offers no option for it, hence
 * a stand-in that always declines, as the DFA itself does when it gives up. The library version
 * is pinned and linear-regex.test.ts checks that the stand-in took.
 */
const NO_DFA = { failed: true, match: () => null, matchSet: () => null };

function disableDfa(program: RE2JS): void {
  const re2 = (program as unknown as { re2Input?: { lazyDFA?: unknown } }).re2Input;
  if (re2 && 'lazyDFA' in re2) re2.lazyDFA = NO_DFA;
}

/** Whether a compiled pattern runs without re2js's DFA (for tests). */
export function runsWithoutDfa(regex: LinearRegex): boolean {
  const program = (regex as LinearRegex & { program?: RE2JS }).program;
  return (program as unknown as { re2Input?: { lazyDFA?: unknown } } | undefined)?.re2Input?.lazyDFA === NO_DFA;
}

interface Mode {
  unicode: boolean;
  ignoreCase: boolean;
  dotAll: boolean;
}

// ---------------------------------------------------------------------------------------------
// Code unit mode. Without `u` JavaScript matches UTF-16 code units: `^..$` matches one emoji and
// `[^a]` matches a lone surrogate. re2js reads a string by code points, so each surrogate unit is
// moved to a private-use code point of its own (U+F0000 + offset), in the text and in the pattern
// alike; no other code point the text can hold is above U+FFFF afterwards.

const SURROGATE_FIRST = 0xd800;
const SURROGATE_LAST = 0xdfff;
const SURROGATE_HOME = 0xf0000;

function unitCodePoint(unit: number): number {
  return unit >= SURROGATE_FIRST && unit <= SURROGATE_LAST ? SURROGATE_HOME + (unit - SURROGATE_FIRST) : unit;
}

function unitsAsCodePoints(text: string): string {
  let i = 0;
  while (i < text.length && !isSurrogate(text.charCodeAt(i))) i++;
  if (i === text.length) return text;
  let out = '';
  let start = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isSurrogate(c)) continue;
    out += text.slice(start, i) + String.fromCodePoint(unitCodePoint(c));
    start = i + 1;
  }
  return out + text.slice(start);
}

function isSurrogate(unit: number): boolean {
  return unit >= SURROGATE_FIRST && unit <= SURROGATE_LAST;
}

// ---------------------------------------------------------------------------------------------
// Sets of code points as sorted, disjoint, non-adjacent [from, to] ranges.

type Ranges = Array<[number, number]>;

const MAX_CODE_POINT = 0x10ffff;

function normalise(ranges: Ranges): Ranges {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function complement(ranges: Ranges, max: number): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of normalise(ranges)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= max) out.push([next, max]);
  return out;
}

/** Ranges of UTF-16 code units moved into the code points the matcher sees (see unitCodePoint). */
function unitsToPoints(ranges: Ranges): Ranges {
  const out: Ranges = [];
  for (const [a, b] of ranges) {
    if (b < SURROGATE_FIRST || a > SURROGATE_LAST) {
      out.push([a, b]);
      continue;
    }
    if (a < SURROGATE_FIRST) out.push([a, SURROGATE_FIRST - 1]);
    out.push([unitCodePoint(Math.max(a, SURROGATE_FIRST)), unitCodePoint(Math.min(b, SURROGATE_LAST))]);
    if (b > SURROGATE_LAST) out.push([SURROGATE_LAST + 1, b]);
  }
  return normalise(out);
}

const hex = (n: number) => `\\x{${n.toString(16)}}`;

function classText(ranges: Ranges): string {
  const r = normalise(ranges);
  if (r.length === 0) return '[^\\x{0}-\\x{10ffff}]';
  if (r.length === 1 && r[0]![0] === r[0]![1]) return hex(r[0]![0]);
  return `[${r.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('')}]`;
}

// ECMAScript WhiteSpace and LineTerminator: what `\s` matches (ECMA-262 CharacterClassEscape).
const SPACE: Ranges = normalise(ECMA_SPACE_RANGES.map(([a, b]) => [a, b]));
const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = normalise([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
const LINE_END: Ranges = normalise([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);

// ---------------------------------------------------------------------------------------------
// Case-blind matching without `u`: ECMA-262 Canonicalize(ch) is ch's toUpperCase when that is one
// code unit and does not turn a non-ASCII unit into an ASCII one; two units match when their
// canonical forms are equal. Built once, on the first `i` pattern.

let canonGroups: number[][] | undefined;

/** The sets of two or more code units that share a canonical form. */
function canonicalGroups(): number[][] {
  if (!canonGroups) {
    const byCanon = new Map<number, number[]>();
    for (let ch = 0; ch < 0x10000; ch++) {
      const upper = String.fromCharCode(ch).toUpperCase();
      let c = ch;
      if (upper.length === 1) {
        const cu = upper.charCodeAt(0);
        c = ch >= 128 && cu < 128 ? ch : cu;
      }
      const group = byCanon.get(c);
      if (group) group.push(ch);
      else byCanon.set(c, [ch]);
    }
    canonGroups = [...byCanon.values()].filter((g) => g.length > 1);
  }
  return canonGroups;
}

/** Every code unit whose canonical form is that of a unit in `ranges`. */
function caseClosure(ranges: Ranges): Ranges {
  const out: Ranges = [...ranges];
  for (const group of canonicalGroups()) {
    if (group.some((m) => inRanges(ranges, m))) for (const m of group) out.push([m, m]);
  }
  return normalise(out);
}

function inRanges(ranges: Ranges, cp: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid]!;
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Translation. Every construct emits RE2 text with the same meaning; what has none is refused.

const REFUSED_GROUPS: Record<string, string> = {
  lookahead: 'a lookahead (?=…)',
  negativeLookahead: 'a negative lookahead (?!…)',
  lookbehind: 'a lookbehind (?<=…)',
  negativeLookbehind: 'a negative lookbehind (?<!…)',
};

function refuse(what: string): never {
  throw new Refused(`uses ${what}, which needs a backtracking engine; patterns here run on a linear-time engine (no lookarounds, no backreferences)`);
}

function emit(node: RootNode<Syntax> | AstNode<Syntax>, mode: Mode): string {
  switch (node.type) {
    case 'alternative':
      return node.body.map((n) => emit(n, mode)).join('');
    case 'disjunction':
      return `(?:${node.body.map((n) => emit(n, mode)).join('|')})`;
    case 'group': {
      const refused = REFUSED_GROUPS[node.behavior];
      if (refused) refuse(refused);
      if ('modifierFlags' in node && node.modifierFlags) throw new Refused('uses inline modifiers (?i:…), which are not supported here');
      return `(?:${node.body.map((n) => emit(n, mode)).join('')})`;
    }
    case 'quantifier': {
      const body = `(?:${emit(node.body[0], mode)})`;
      const lazy = node.greedy ? '' : '?';
      if (node.max === undefined) return `${body}{${node.min},}${lazy}`;
      return `${body}{${node.min},${node.max}}${lazy}`;
    }
    case 'anchor':
      switch (node.kind) {
        case 'start':
          return '^';
        case 'end':
          return '$';
        case 'boundary':
          return '\\b';
        case 'not-boundary':
          return '\\B';
      }
      throw new Refused(`uses the anchor ${(node as { raw: string }).raw}, which is not supported here`);
    case 'reference':
      return refuse(`a backreference (${node.raw})`);
    case 'dot':
      return mode.dotAll ? classText(domain(mode)) : classText(toMatcher(complement(LINE_END, unitMax(mode)), mode));
    case 'value':
    case 'characterClassEscape':
    case 'unicodePropertyEscape':
      return emitClass({ type: 'characterClass', negative: false, kind: 'union', body: [node], range: node.range, raw: node.raw }, mode);
    case 'characterClass':
      return emitClass(node, mode);
    case 'characterClassRange':
      throw new Error('a class range outside a class');
  }
}

function unitMax(mode: Mode): number {
  return mode.unicode ? MAX_CODE_POINT : 0xffff;
}

function domain(mode: Mode): Ranges {
  return toMatcher([[0, unitMax(mode)]], mode);
}

/** Ranges in the pattern's alphabet (code units or code points) → what the matcher sees. */
function toMatcher(ranges: Ranges, mode: Mode): Ranges {
  return mode.unicode ? normalise(ranges) : unitsToPoints(ranges);
}

function emitClass(node: CharacterClass<Syntax>, mode: Mode): string {
  if (node.kind !== 'union') throw new Refused('uses set operations in a class (the v flag), which are not supported here');
  const max = unitMax(mode);
  let ranges: Ranges = [];
  const properties: string[] = [];
  for (const item of node.body as CharacterClassBody[]) {
    switch (item.type) {
      case 'value':
        if (mode.unicode && item.codePoint >= SURROGATE_FIRST && item.codePoint <= SURROGATE_LAST) throw new Refused('names a lone surrogate, which is not supported with the u flag');
        ranges.push([item.codePoint, item.codePoint]);
        break;
      case 'characterClassRange':
        if (mode.unicode && rangeTouchesSurrogates(item.min.codePoint, item.max.codePoint)) throw new Refused('names lone surrogates in a range, which is not supported with the u flag');
        ranges.push([item.min.codePoint, item.max.codePoint]);
        break;
      case 'characterClassEscape': {
        const base = item.value.toLowerCase() === 'd' ? DIGIT : item.value.toLowerCase() === 'w' ? WORD : SPACE;
        ranges.push(...(item.value === item.value.toLowerCase() ? base : complement(base, max)));
        break;
      }
      case 'unicodePropertyEscape':
        properties.push(propertyText(item.value, item.negative));
        break;
    }
  }
  if (mode.ignoreCase) {
    if (mode.unicode || properties.length > 0) throw new Refused('combines case-blind matching with the u flag or \\p{…}, which is not supported here');
    ranges = caseClosure(normalise(ranges));
  }
  if (properties.length === 0) {
    const set = node.negative ? complement(ranges, max) : normalise(ranges);
    return classText(toMatcher(set, mode));
  }
  // \p{…} only with `u`: RE2 reads the class in code points as JavaScript does there.
  const inner = normalise(ranges).map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('') + properties.join('');
  return `[${node.negative ? '^' : ''}${inner}]`;
}

function rangeTouchesSurrogates(a: number, b: number): boolean {
  return a <= SURROGATE_LAST && b >= SURROGATE_FIRST;
}

// General categories by their one- and two-letter names (and long names), the scripts RE2 knows
// by Script=/sc= with their long names. Anything else (binary properties, Script_Extensions) is
// refused rather than guessed.
const CATEGORY_LONG: Record<string, string> = {
  Letter: 'L', Cased_Letter: 'LC', Uppercase_Letter: 'Lu', Lowercase_Letter: 'Ll', Titlecase_Letter: 'Lt', Modifier_Letter: 'Lm', Other_Letter: 'Lo',
  Mark: 'M', Nonspacing_Mark: 'Mn', Spacing_Mark: 'Mc', Enclosing_Mark: 'Me',
  Number: 'N', Decimal_Number: 'Nd', Letter_Number: 'Nl', Other_Number: 'No',
  Punctuation: 'P', Connector_Punctuation: 'Pc', Dash_Punctuation: 'Pd', Open_Punctuation: 'Ps', Close_Punctuation: 'Pe', Initial_Punctuation: 'Pi', Final_Punctuation: 'Pf', Other_Punctuation: 'Po',
  Symbol: 'S', Math_Symbol: 'Sm', Currency_Symbol: 'Sc', Modifier_Symbol: 'Sk', Other_Symbol: 'So',
  Separator: 'Z', Space_Separator: 'Zs', Line_Separator: 'Zl', Paragraph_Separator: 'Zp',
  Other: 'C', Control: 'Cc', Format: 'Cf', Surrogate: 'Cs', Private_Use: 'Co', Unassigned: 'Cn',
};
const CATEGORY_SHORT = new Set(Object.values(CATEGORY_LONG).filter((c) => c !== 'LC' && c !== 'Cn' && c !== 'Cs'));

function propertyText(value: string, negative: boolean): string {
  const p = negative ? 'P' : 'p';
  const [key, name] = value.includes('=') ? (value.split('=') as [string, string]) : [undefined, value];
  if (key === undefined || key === 'General_Category' || key === 'gc') {
    const short = CATEGORY_LONG[name] ?? name;
    if (CATEGORY_SHORT.has(short)) return `\\${p}{${short}}`;
  } else if ((key === 'Script' || key === 'sc') && /^[A-Z][a-z]+(?:_[A-Z][a-z]+)*$/.test(name)) {
    try {
      engine().RE2JS.compile(`\\p{${name}}`);
      return `\\${p}{${name}}`;
    } catch {
      // not a script RE2 knows by that name: refused below
    }
  }
  throw new Refused(`uses the property \\${p}{${value}}, which is not supported here (general categories and Script= with long names are)`);
}
