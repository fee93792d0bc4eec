import { json5 } from '../util/json5.js';
import { yaml } from '../util/yaml.js';
import type { SkillDefinition, SkillMetadata, SkillRequirements } from './types.js';
import { isRecord } from '../util/guards.js';

export type ParseResult = { ok: true; value: SkillDefinition } | { ok: false; error: string };

/** Metadata objects Warden reads, in order of preference; `clawdbot` is OpenClaw's legacy key. */
const METADATA_KEYS = ['warden', 'openclaw', 'clawdbot'] as const;

/**
 * Parses a SKILL.md: YAML frontmatter between `---` lines, then Markdown. Accepts what OpenClaw
 * accepts — `metadata` as a YAML mapping or as a JSON5 string, `snake_case` spellings of the
 * dispatch keys, an unquoted description containing `: ` — so OpenClaw skills load unchanged.
 * Any value Warden cannot interpret is an error naming the field, never a silent default.
 */
export function parseSkillMarkdown(text: string, folderName: string): ParseResult {
  const block = extractFrontmatter(text);
  if (!block.ok) return block;
  const parsed = parseYamlMapping(block.value);
  if (!parsed.ok) return parsed;
  return readDefinition(parsed.value, folderName);
}

/** The Markdown after a SKILL.md's frontmatter: the instructions themselves ('' when malformed). */
export function skillInstructions(text: string): string {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const open = /^---[ \t]*\n/.exec(normalized);
  if (!open) return '';
  const rest = normalized.slice(open[0].length);
  const close = /(?:^|\n)---[ \t]*(?:\n|$)/.exec(rest);
  return close ? rest.slice(close.index + close[0].length).trim() : '';
}

function extractFrontmatter(text: string): { ok: true; value: string } | { ok: false; error: string } {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const open = /^---[ \t]*\n/.exec(normalized);
  if (!open) return { ok: false, error: 'missing YAML frontmatter: SKILL.md must start with a --- line' };
  const rest = normalized.slice(open[0].length);
  const close = /(?:^|\n)---[ \t]*(?:\n|$)/.exec(rest);
  if (!close) return { ok: false, error: 'frontmatter is not closed: no --- line after it' };
  return { ok: true, value: rest.slice(0, close.index) };
}

function parseYamlMapping(block: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let result = parseYamlOnce(block);
  if (!result.ok) {
    // Hand-written skills often say `description: Use when: …`, which strict YAML rejects.
    const recovered = quoteColonScalars(block);
    if (recovered !== block) {
      const retry = parseYamlOnce(recovered);
      if (retry.ok) result = retry;
    }
  }
  return result;
}

function parseYamlOnce(block: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  const doc = yaml().parseDocument(block, { schema: 'core', prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) return { ok: false, error: `invalid frontmatter: ${doc.errors[0]!.message.split('\n')[0]}` };
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return { ok: true, value: {} };
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'invalid frontmatter: expected a YAML mapping of keys' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Quotes top-level plain scalars that contain `: ` so they read as the one string the author meant. */
export function quoteColonScalars(block: string): string {
  return block
    .split('\n')
    .map((line) => {
      // The value starts at a non-blank: `[ \t]+(.+)$` would retry every blank of a long run
      // before a line separator. A line blank after the colon is kept as it is either way.
      const m = /^([A-Za-z][\w-]*):[ \t]+([^ \t].*)$/.exec(line);
      if (!m) return line;
      const value = m[2]!.trim();
      if (/^["'[{|>&*!#]/.test(value) || !/:\s/.test(value)) return line;
      return `${m[1]}: ${JSON.stringify(value)}`;
    })
    .join('\n');
}

function readDefinition(fm: Record<string, unknown>, folderName: string): ParseResult {
  const problems: string[] = [];

  const rawName = fm.name ?? folderName;
  const name = typeof rawName === 'string' || typeof rawName === 'number' ? String(rawName).trim() : '';
  if (!name) problems.push('name: must be a non-empty string');
  else if (/[\u0000-\u001f]/.test(name)) problems.push('name: must be one line of text');

  const description = typeof fm.description === 'string' ? fm.description.trim() : '';
  if (fm.description !== undefined && typeof fm.description !== 'string') problems.push('description: must be a string');
  else if (!description) problems.push('description is required');

  const userInvocable = readBool(fm, ['user-invocable', 'user_invocable'], true, problems);
  const disableModelInvocation = readBool(fm, ['disable-model-invocation', 'disable_model_invocation'], false, problems);

  let commandDispatch: SkillDefinition['commandDispatch'];
  const dispatch = pick(fm, ['command-dispatch', 'command_dispatch']);
  if (dispatch !== undefined) {
    const tool = pick(fm, ['command-tool', 'command_tool']);
    if (String(dispatch).trim().toLowerCase() !== 'tool') problems.push(`command-dispatch: expected "tool", got ${JSON.stringify(dispatch)}`);
    else if (typeof tool !== 'string' || !tool.trim()) problems.push('command-tool: required when command-dispatch is "tool"');
    // Only the raw argument mode exists; OpenClaw treats anything else as raw too.
    else commandDispatch = { kind: 'tool', tool: tool.trim(), argMode: 'raw' };
  }

  const metadata = readMetadata(fm.metadata, problems);

  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  return {
    ok: true,
    value: {
      name,
      description,
      userInvocable,
      disableModelInvocation,
      ...(commandDispatch ? { commandDispatch } : {}),
      metadata,
    },
  };
}

const emptyMetadata = (): SkillMetadata => ({ always: false, os: [], requires: { bins: [], anyBins: [], env: [], config: [] } });

function readMetadata(raw: unknown, problems: string[]): SkillMetadata {
  if (raw === undefined || raw === null || raw === '') return emptyMetadata();
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = json5().parse(raw);
    } catch (err) {
      problems.push(`metadata: not valid JSON5 (${(err as Error).message})`);
      return emptyMetadata();
    }
  }
  if (!isRecord(value)) {
    problems.push('metadata: expected an object');
    return emptyMetadata();
  }
  const key = METADATA_KEYS.find((k) => value[k] !== undefined);
  // Metadata for other tools (no openclaw/warden object) carries no gating for Warden.
  if (!key) return emptyMetadata();
  const block = value[key];
  const at = `metadata.${key}`;
  if (!isRecord(block)) {
    problems.push(`${at}: expected an object`);
    return emptyMetadata();
  }

  const out = emptyMetadata();
  if (block.always !== undefined) {
    const always = toBool(block.always);
    if (always === undefined) problems.push(`${at}.always: expected true or false`);
    else out.always = always;
  }
  for (const field of ['skillKey', 'primaryEnv', 'emoji', 'homepage'] as const) {
    const v = block[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !v.trim()) problems.push(`${at}.${field}: expected a non-empty string`);
    else out[field] = v.trim();
  }
  out.os = readList(block.os, `${at}.os`, problems);
  if (block.requires !== undefined) {
    if (!isRecord(block.requires)) problems.push(`${at}.requires: expected an object`);
    else {
      const req: SkillRequirements = { bins: [], anyBins: [], env: [], config: [] };
      for (const field of ['bins', 'anyBins', 'env', 'config'] as const) {
        req[field] = readList(block.requires[field], `${at}.requires.${field}`, problems);
      }
      out.requires = req;
    }
  }
  return out;
}

/** A list of strings, written as a YAML/JSON array or as a comma-separated string. */
function readList(raw: unknown, at: string, problems: string[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (!Array.isArray(raw)) {
    problems.push(`${at}: expected a list of strings`);
    return [];
  }
  const out: string[] = [];
  raw.forEach((item, i) => {
    if (typeof item !== 'string') problems.push(`${at}[${i}]: expected a string, got ${JSON.stringify(item)}`);
    else if (item.trim()) out.push(item.trim());
  });
  return out;
}

function readBool(fm: Record<string, unknown>, keys: string[], fallback: boolean, problems: string[]): boolean {
  const raw = pick(fm, keys);
  if (raw === undefined || raw === null) return fallback;
  const value = toBool(raw);
  if (value === undefined) {
    problems.push(`${keys[0]}: expected true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  }
  return value;
}

function toBool(raw: unknown): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(s)) return true;
  if (['false', 'no', 'off', '0'].includes(s)) return false;
  return undefined;
}

function pick(fm: Record<string, unknown>, keys: string[]): unknown {
  for (const k of keys) if (fm[k] !== undefined) return fm[k];
  return undefined;
}

