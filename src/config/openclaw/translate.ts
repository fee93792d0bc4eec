import { formatPath, type ConfigProblem } from '../errors.js';
import { COMPAT_POINTER, OPENCLAW_OTHER_RULES, OPENCLAW_TOOLS_RULES, type CompatEntry, type CompatRule, type RuleScope } from './rules.js';

/**
 * Reads a raw config written OpenClaw's way into Warden's keys before the schema sees it:
 * renamed keys move to Warden's name, `agents.entries` becomes `agents.list`, off switches of
 * features Warden lacks are dropped, and every OpenClaw key Warden refuses gets a problem that
 * says so ("OpenClaw's `tools.codeMode` is not supported by Warden: …") instead of the schema's
 * bare "unknown key". Pure: the input is not modified.
 */
export interface Translation {
  value: unknown;
  problems: ConfigProblem[];
  /** Warden path → the path the user wrote, for problems the schema reports later. */
  renamed: Map<string, string>;
}

type Path = Array<string | number>;
type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function translateOpenClaw(raw: unknown): Translation {
  const problems: ConfigProblem[] = [];
  const renamed = new Map<string, string>();
  if (!isObject(raw)) return { value: raw, problems, renamed };
  const root: Obj = structuredClone(raw);

  const agents = root.agents;
  if (isObject(agents) && agents.entries !== undefined) {
    if (agents.list !== undefined) problems.push({ path: 'agents.entries', message: 'agents.entries and agents.list are two spellings of the roster: keep one' });
    else if (!isObject(agents.entries)) problems.push({ path: 'agents.entries', message: 'expected an object of agents by id' });
    else {
      // OpenClaw's keyed roster is Warden's list, in the order written; the id comes from the key.
      const list = Object.entries(agents.entries).map(([id, entry]) => ({ id, ...(isObject(entry) ? entry : {}) }));
      const ids = Object.keys(agents.entries);
      delete agents.entries;
      agents.list = list;
      ids.forEach((id, i) => renamed.set(formatPath(['agents', 'list', i]), formatPath(['agents', 'entries', id])));
    }
  }

  const ctx: WalkContext = { root, problems, renamed };
  if (isObject(root.tools)) walk(root.tools, ['tools'], [], 'global', OPENCLAW_TOOLS_RULES, ctx);
  if (isObject(agents) && Array.isArray(agents.list)) {
    agents.list.forEach((agent, i) => {
      if (isObject(agent) && isObject(agent.tools)) walk(agent.tools, ['agents', 'list', i, 'tools'], [], 'agent', OPENCLAW_TOOLS_RULES, ctx);
    });
  }
  walk(root, [], [], 'global', OPENCLAW_OTHER_RULES, ctx);
  pruneEmpty(root, 'skills', 'load');
  pruneEmpty(root, 'plugins', 'load');
  return { value: root, problems, renamed };
}

/** Reports a schema problem at the path the user wrote when the value was moved. */
export function restoreWrittenPaths(problems: ConfigProblem[], renamed: Map<string, string>): ConfigProblem[] {
  if (renamed.size === 0) return problems;
  return problems.map((p) => ({ ...p, path: writtenPath(p.path, renamed) }));
}

/** A Warden path as the user wrote it: the longest moved prefix replaced by its origin. */
function writtenPath(path: string, renamed: Map<string, string>): string {
  let best: [string, string] | undefined;
  for (const move of renamed) {
    const [to] = move;
    if ((path === to || path.startsWith(`${to}.`) || path.startsWith(`${to}[`)) && (!best || to.length > best[0].length)) best = move;
  }
  return best ? best[1] + path.slice(best[0].length) : path;
}

/** The refusal every unsupported OpenClaw key gets: what, why, and where to read more. */
export function notSupported(written: string, why: string): string {
  return `OpenClaw's \`${written}\` is not supported by Warden: ${why} (${COMPAT_POINTER})`;
}

interface WalkContext {
  root: Obj;
  problems: ConfigProblem[];
  renamed: Map<string, string>;
}

function matches(pattern: readonly string[], rel: readonly (string | number)[]): boolean {
  if (pattern.length !== rel.length) return false;
  return pattern.every((seg, i) => (seg === '*' ? typeof rel[i] === 'string' : seg === '[]' ? typeof rel[i] === 'number' : seg === rel[i]));
}

const compiled = new WeakMap<readonly CompatEntry[], Array<{ pattern: string[]; entry: CompatEntry }>>();
function patternsOf(rules: readonly CompatEntry[]) {
  let list = compiled.get(rules);
  if (!list) {
    list = rules.map((entry) => ({ entry, pattern: entry.path.replaceAll('[]', '.[]').split('.') }));
    compiled.set(rules, list);
  }
  return list;
}

function ruleFor(rules: readonly CompatEntry[], rel: readonly (string | number)[], scope: RuleScope): CompatRule | undefined {
  return patternsOf(rules).find(({ pattern, entry }) => (entry.scope === 'both' || entry.scope === scope) && matches(pattern, rel))?.entry.rule;
}

function walk(node: unknown, at: Path, rel: Path, scope: RuleScope, rules: readonly CompatEntry[], ctx: WalkContext): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walk(item, [...at, i], [...rel, i], scope, rules, ctx));
    return;
  }
  if (!isObject(node)) return;
  for (const key of Object.keys(node)) {
    const keyAt = [...at, key];
    const keyRel = [...rel, key];
    const rule = ruleFor(rules, keyRel, scope);
    if (rule) {
      apply(rule, node, key, keyAt, ctx);
      continue;
    }
    walk(node[key], keyAt, keyRel, scope, rules, ctx);
  }
}

function apply(rule: CompatRule, parent: Obj, key: string, at: Path, ctx: WalkContext): void {
  const value = parent[key];
  const written = writtenPath(formatPath(at), ctx.renamed);
  switch (rule.kind) {
    case 'rename': {
      // A target with dots is a path from the root (`skills.load.extraDirs` → `skills.extraDirs`);
      // a bare name is a sibling (`exec.timeoutSeconds` → `exec.timeoutSec`).
      const target: Path = rule.to.includes('.') ? rule.to.split('.') : [...at.slice(0, -1), rule.to];
      const holder = rule.to.includes('.') ? objectAt(ctx.root, target.slice(0, -1)) : parent;
      const targetKey = String(target.at(-1));
      if (holder === undefined) return;
      if (holder[targetKey] !== undefined) {
        ctx.problems.push({ path: written, message: `${key} is OpenClaw's name for ${writtenPath(formatPath(target), ctx.renamed)}, which is set too: keep one` });
        delete parent[key];
        return;
      }
      holder[targetKey] = value;
      delete parent[key];
      ctx.renamed.set(formatPath(target), written);
      return;
    }
    // A refused key leaves the tree with its problem, so the schema does not report it again.
    case 'unsupported':
      ctx.problems.push({ path: written, message: notSupported(written, rule.why) });
      delete parent[key];
      return;
    case 'off-only':
      if (!rule.isOff(value)) ctx.problems.push({ path: written, message: notSupported(written, `${rule.why} (turning it off is accepted)`) });
      delete parent[key];
      return;
    case 'stricter':
      if (!rule.accepts(value)) ctx.problems.push({ path: written, message: notSupported(`${written}: ${JSON.stringify(value)}`, `in OpenClaw it ${rule.openclaw}; Warden ${rule.warden}`) });
      delete parent[key];
      return;
    case 'translate': {
      const outcome = rule.apply(value, parent);
      if (!outcome.ok) {
        const at2 = outcome.key ? `${written}.${outcome.key}` : written;
        ctx.problems.push({ path: at2, message: notSupported(`${at2}: ${outcome.value}`, outcome.why) });
        delete parent[key];
        return;
      }
      if (outcome.drop) delete parent[key];
      for (const [k, v] of Object.entries(outcome.set ?? {})) {
        parent[k] = v;
        ctx.renamed.set(formatPath([...at.slice(0, -1), k]), written);
      }
    }
  }
}

/** The object at a path from the root, created where missing; undefined when a value is in the way. */
function objectAt(root: Obj, path: Path): Obj | undefined {
  let node: Obj = root;
  for (const seg of path) {
    const key = String(seg);
    if (node[key] === undefined) node[key] = {};
    const next = node[key];
    if (!isObject(next)) return undefined;
    node = next;
  }
  return node;
}

function pruneEmpty(root: Obj, ...path: string[]): void {
  const parent = path.slice(0, -1).reduce<unknown>((n, k) => (isObject(n) ? n[k] : undefined), root);
  const key = path.at(-1)!;
  if (isObject(parent) && isObject(parent[key]) && Object.keys(parent[key] as Obj).length === 0) delete parent[key];
}
