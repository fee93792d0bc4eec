import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { yaml } from '../../util/yaml.js';
import type { ConfigProblem } from '../errors.js';
import { configFromRaw, parseConfigText, type LoadedConfig } from '../load.js';
import { applyMergePatchToJson5 } from './json5-edit.js';
import { applyMergePatch, patchProblem } from './merge-patch.js';
import { applyMergePatchToYaml } from './yaml-write.js';

export type PatchedConfigFile =
  | { ok: true; text: string; loaded: LoadedConfig }
  | { ok: false; problems: ConfigProblem[] };

/**
 * A merge patch applied to a config file's text: validated as the loader validates the file
 * (`${NAME}` substitution, OpenClaw's spellings, the schema, with key paths in every problem),
 * then written into the text node by node — YAML through the `yaml` Document, JSON5 and JSON by
 * splicing spans — so comments and layout survive. The new text is parsed again and must mean
 * exactly the validated value, or nothing is returned to write.
 */
export function patchConfigText(file: string, text: string, patch: unknown, env: Record<string, string | undefined>): PatchedConfigFile {
  const bad = patchProblem(patch);
  if (bad) return { ok: false, problems: [{ path: '', message: bad }] };
  const source = text.trim() === '' ? emptyFor(file) : text;
  const parsed = parseConfigText(file, source);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  const before = parsed.value ?? {};
  const candidate = applyMergePatch(before, patch);
  const validated = configFromRaw(candidate, { file, env });
  if (!validated.ok) return { ok: false, problems: validated.error.problems };

  let next: string;
  try {
    next = writePatch(file, source, patch as Record<string, unknown>);
  } catch (err) {
    return { ok: false, problems: [{ path: '', message: `the file could not be edited in place: ${(err as Error).message}` }] };
  }
  const reread = parseConfigText(file, next);
  if (!reread.ok || !isDeepStrictEqual(reread.value ?? {}, candidate)) {
    return { ok: false, problems: [{ path: '', message: 'the edited file would not read back as the validated config; nothing was written' }] };
  }
  return { ok: true, text: next, loaded: validated.value };
}

function isJsonLike(file: string): boolean {
  const ext = path.extname(file).toLowerCase();
  return ext === '.json5' || ext === '.json';
}

const emptyFor = (file: string): string => (isJsonLike(file) ? '{}\n' : '');

function writePatch(file: string, text: string, patch: Record<string, unknown>): string {
  if (isJsonLike(file)) return applyMergePatchToJson5(text, patch, { json: path.extname(file).toLowerCase() === '.json' });
  const doc = yaml().parseDocument(text, { uniqueKeys: true });
  applyMergePatchToYaml(doc, patch);
  return doc.toString();
}
