import { compileLinearRegex, type LinearCompile } from '../../util/linear-regex.js';
import type { JsonSchema } from '../types.js';

/** One problem with a call's arguments, located by field path (`items[2].name`). */
export interface ArgumentProblem {
  path: string;
  message: string;
}

/**
 * Validates call arguments against the JSON Schema subset our tools use: type (incl. arrays of
 * types), properties, required, additionalProperties, enum, const, items, minimum/maximum,
 * exclusiveMinimum/Maximum, minLength/maxLength, minItems/maxItems, pattern, oneOf/anyOf.
 * Unknown keywords are ignored. Returns every problem; an empty list means valid.
 */
export function validateArgs(schema: JsonSchema, value: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  check(schema, value, '', problems);
  return problems;
}

/** `command: required; timeout: expected integer, got string` */
export function formatArgumentProblems(problems: readonly ArgumentProblem[]): string {
  return problems.map((p) => `${p.path || '(arguments)'}: ${p.message}`).join('; ');
}

const join = (base: string, key: string) => (base ? `${base}.${key}` : key);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(expected: string, value: unknown): boolean {
  const actual = typeOf(value);
  if (expected === 'number') return actual === 'number' || actual === 'integer';
  return expected === actual;
}

function check(schema: JsonSchema, value: unknown, path: string, problems: ArgumentProblem[]): void {
  if (typeof schema !== 'object' || schema === null) return;
  const s = schema as Record<string, unknown>;

  if (s.type !== undefined) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
    if (!types.some((t) => matchesType(t, value))) {
      problems.push({ path, message: `expected ${types.join(' or ')}, got ${value === undefined ? 'nothing' : typeOf(value)}` });
      return;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value))) {
    problems.push({ path, message: `must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if ('const' in s && !deepEqual(s.const, value)) problems.push({ path, message: `must be ${JSON.stringify(s.const)}` });

  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && [...value].length < s.minLength) problems.push({ path, message: `must be at least ${s.minLength} characters` });
    if (typeof s.maxLength === 'number' && [...value].length > s.maxLength) problems.push({ path, message: `must be at most ${s.maxLength} characters` });
    if (typeof s.pattern === 'string') {
      const compiled = compilePattern(s.pattern);
      const matched = compiled.ok ? compiled.regex.test(value) : undefined;
      if (!compiled.ok) problems.push({ path, message: `cannot be checked: the tool's schema pattern ${s.pattern} ${compiled.error}` });
      else if (matched === 'too-long') problems.push({ path, message: `is ${value.length.toLocaleString('en-US')} characters long; the schema's pattern is checked on at most ${compiled.regex.maxInput.toLocaleString('en-US')}` });
      else if (!matched) problems.push({ path, message: `must match ${s.pattern}` });
    }
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) problems.push({ path, message: `must be ≥ ${s.minimum}` });
    if (typeof s.maximum === 'number' && value > s.maximum) problems.push({ path, message: `must be ≤ ${s.maximum}` });
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) problems.push({ path, message: `must be > ${s.exclusiveMinimum}` });
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) problems.push({ path, message: `must be < ${s.exclusiveMaximum}` });
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) problems.push({ path, message: `must have at least ${s.minItems} items` });
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) problems.push({ path, message: `must have at most ${s.maxItems} items` });
    if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) {
      value.forEach((item, i) => check(s.items as JsonSchema, item, `${path}[${i}]`, problems));
    }
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    const props = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<string, JsonSchema>;
    if (Array.isArray(s.required)) {
      for (const key of s.required as string[]) if (obj[key] === undefined) problems.push({ path: join(path, key), message: 'required' });
    }
    for (const [key, child] of Object.entries(obj)) {
      if (child === undefined) continue;
      if (Object.hasOwn(props, key)) check(props[key]!, child, join(path, key), problems);
      else if (s.additionalProperties === false) problems.push({ path: join(path, key), message: 'unknown field' });
      else if (s.additionalProperties && typeof s.additionalProperties === 'object') check(s.additionalProperties as JsonSchema, child, join(path, key), problems);
    }
  }
  if (Array.isArray(s.anyOf)) {
    const variants = s.anyOf as JsonSchema[];
    const results = variants.map((v) => validateAt(v, value, path));
    if (!results.some((r) => r.length === 0)) problems.push(...closestVariant(results, path, 'anyOf'));
  }
  if (Array.isArray(s.oneOf)) {
    const variants = s.oneOf as JsonSchema[];
    const results = variants.map((v) => validateAt(v, value, path));
    const passing = results.filter((r) => r.length === 0).length;
    if (passing === 0) problems.push(...closestVariant(results, path, 'oneOf'));
    else if (passing > 1) problems.push({ path, message: `matches ${passing} of the oneOf variants; it must match exactly one` });
  }
}

/**
 * A schema's `pattern` (a plugin tool's; MCP schemas arrive without theirs, src/mcp/schema.ts)
 * runs on the linear-time engine against the model's text: JSON Schema reads it as a Unicode regex; one that parses only without `u` (`\\-`,
 * `\\_`, common in schemas written for other engines) is read that way. One the engine cannot
 * run fails the argument with the reason rather than going unchecked.
 */
function compilePattern(pattern: string): LinearCompile {
  const unicode = compileLinearRegex(pattern, 'u');
  if (unicode.ok || !unicode.syntax) return unicode;
  const plain = compileLinearRegex(pattern, '');
  return plain.ok || !plain.syntax ? plain : unicode;
}

function validateAt(schema: JsonSchema, value: unknown, path: string): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  check(schema, value, path, problems);
  return problems;
}

/** For a failed union, the problems of the variant that came closest, so the message is specific. */
function closestVariant(results: ArgumentProblem[][], path: string, keyword: string): ArgumentProblem[] {
  // A type mismatch at the union's own path says nothing about which variant was meant; among
  // the variants of the right type, the one with fewest problems explains best.
  const typeMiss = (r: ArgumentProblem[]) => r.every((p) => p.path === path && p.message.startsWith('expected'));
  const best = results.filter((r) => !typeMiss(r)).sort((a, b) => a.length - b.length)[0];
  return best ?? [{ path, message: `does not match any ${keyword} variant` }];
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
