/**
 * Warden's own regular expressions run on one event loop shared by every conversation, and most
 * of them read text an attacker writes: fetched pages, search results, tool output, chat
 * messages, model answers, commands. V8 backtracks, so a pattern that is polynomial on some
 * input (`/\[([^\]]*)\]\([^)]*\)/g` on a page of `[`s, `/\/+$/` on a run of `/`) stalls them all.
 *
 * The first part keeps the class closed: every regex literal, and every `new RegExp('…')` /
 * `RegExp('…')` with a constant source, in the non-test sources under src/ and plugins/ goes
 * through the ReDoS checker recheck and must be rated safe. A pattern that is not may stay only
 * with a `// redos-ok: <why>` comment directly above it that says what bounds its input or why
 * the input is trusted. The second part feeds the rewritten functions the inputs that used to
 * take seconds, through their public entry points.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseElementLine } from '../../src/browser/snapshot.js';
import { channelRefsIn } from '../../src/tools/core/cron/target.js';
import { detectControlCommand } from '../../src/exec/control.js';
import { memberName, repoConfigInvocation } from '../../src/exec/repo-config.js';
import { parseCronCommand } from '../../src/gateway/cron-command.js';
import { forPeople } from '../../src/gateway/people-text.js';
import { withoutExitTrailer } from '../../src/media-understanding/cli.js';
import { slugify } from '../../src/policy/channel-scope.js';
import { parseSkillMarkdown } from '../../src/skills/frontmatter.js';
import { parsePageRange } from '../../src/tools/core/media/page-range.js';
import { tidyPageText } from '../../src/tools/core/media/pdf-text.js';
import { chunkMarkdown } from '../../src/tools/core/memory/memory-chunks.js';
import { markdownToText } from '../../src/tools/core/web/extract.js';
import { plain } from '../../src/tools/core/web/search/clean.js';
import { markdownLinks } from '../../src/tools/core/web/search/grounded.js';
import { joinUrl } from '../../src/tools/core/web/search/http.js';
import { withoutUntrustedTags } from '../../plugins/incidents/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);

// The native checker when this platform has its binary (an optional dependency), else the
// pure-JavaScript one: the same verdicts, slower. Never the JVM one.
function hasNativeChecker(): boolean {
  try {
    require.resolve(`recheck-${process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}/package.json`);
    return true;
  } catch {
    return false;
  }
}
// `RECHECK_BACKEND=pure` runs the fallback on purpose.
process.env.RECHECK_BACKEND = process.env.RECHECK_BACKEND !== 'pure' && hasNativeChecker() ? 'native' : 'pure';
const { check } = await import('recheck');

/**
 * The fuzzing checker's own limits count characters its VM reads, not milliseconds, so a loaded
 * machine cannot turn a slow attempt into a verdict: with the fixed seed the verdicts repeat.
 * Only the whole check has a time limit; a pattern still unproven then is tried once more, alone,
 * with the long one.
 */
const PARAMS = { attackTimeout: null, incubationTimeout: null, seedingTimeout: null, randomSeed: 0 } as const;
const TIMEOUT_MS = 20_000;
const RETRY_TIMEOUT_MS = 120_000;

interface Literal {
  where: string;
  source: string;
  flags: string;
  /** The reason given in a `redos-ok:` comment directly above, if any. */
  waiver?: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...sourceFiles(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** The `redos-ok:` reason in the comment lines directly above `line` (0-based), if any. */
function waiverAbove(lines: readonly string[], line: number): string | undefined {
  for (let i = line - 1; i >= 0; i--) {
    const text = lines[i]!.trim();
    if (!(text.startsWith('//') || text.startsWith('*') || text.startsWith('/*') || text.endsWith('*/'))) return undefined;
    const reason = /redos-ok:(.*)/.exec(text)?.[1]?.replace(/\*\/\s*$/, '').trim();
    if (reason) return reason;
  }
  return undefined;
}

/** A string constant as the compiler reads it: a string literal or a template without substitutions. */
function constantText(node: ts.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

function literalsOf(file: string): Literal[] {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const rel = path.relative(ROOT, file);
  const found: Literal[] = [];
  const add = (node: ts.Node, source: string, flags: string) => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
    const waiver = waiverAbove(lines, line);
    found.push({ where: `${rel}:${line + 1}`, source, flags, ...(waiver ? { waiver } : {}) });
  };
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sf);
      const end = literal.lastIndexOf('/');
      add(node, literal.slice(1, end), literal.slice(end + 1));
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const source = constantText(node.arguments?.[0]);
      // Flags that are not a constant are checked as the strictest reading recheck knows: none.
      if (source !== undefined) add(node, source, constantText(node.arguments?.[1]) ?? '');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

// `g` and `y` change where matching starts, not how one attempt backtracks; recheck checks the
// unanchored search either way. `d` only adds indices.
const checkedFlags = (flags: string) => flags.replace(/[gyd]/g, '');

/** Without a quantifier a pattern cannot repeat, so every attempt is bounded by its own length. */
const cannotRepeat = (source: string) => !/[*+?{]/.test(source);

const literals = [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'plugins'))].flatMap(literalsOf);

/** The unwaived patterns that can repeat, each distinct pattern (with its checked flags) once, with where it is written. */
const checked = (() => {
  const byKey = new Map<string, { source: string; flags: string; where: string[] }>();
  for (const l of literals) {
    if (l.waiver !== undefined || cannotRepeat(l.source)) continue;
    const flags = checkedFlags(l.flags);
    const key = `${flags}/${l.source}`;
    const entry = byKey.get(key);
    const where = l.flags === flags ? l.where : `${l.where} (written with flags ${l.flags})`;
    if (entry) entry.where.push(where);
    else byKey.set(key, { source: l.source, flags, where: [where] });
  }
  return [...byKey.values()];
})();
const GROUP_SIZE = 40;
const groups = Array.from({ length: Math.ceil(checked.length / GROUP_SIZE) }, (_, i) => {
  const group = checked.slice(i * GROUP_SIZE, (i + 1) * GROUP_SIZE);
  return [i * GROUP_SIZE + 1, i * GROUP_SIZE + group.length, group] as const;
});

describe('every regular expression of Warden’s own sources is linear, or says why it may not be', () => {
  it('finds the literals (the collector itself works)', () => {
    expect(literals.length).toBeGreaterThan(300);
    expect(checked.length).toBeGreaterThan(100);
    expect(literals.some((l) => l.where.startsWith('plugins/'))).toBe(true);
    expect(literalsOf(path.join(ROOT, 'src/gateway/people-text.ts')).map((l) => l.flags)).toContain('gi');
  });

  // Each distinct pattern once (with every place it is written), in groups: recheck's work is
  // CPU-bound, ~25 s for all of them on a quiet machine and five times that beside another
  // suite, so one test for all of them ran past any fixed limit on a loaded machine; a group's
  // limit covers its own checks, a retry among them included.
  it.each(groups)('recheck rates every unwaived pattern safe: patterns %i–%i', async (_from, _to, group) => {
    // One at a time: checks run side by side only slow each other down.
    const failures: string[] = [];
    for (const { source, flags, where } of group) {
      let result = await check(source, flags, { ...PARAMS, timeout: TIMEOUT_MS });
      if (result.status === 'unknown' && result.error.kind === 'timeout') result = await check(source, flags, { ...PARAMS, timeout: RETRY_TIMEOUT_MS });
      const status =
        result.status === 'safe'
          ? 'safe'
          : result.status === 'vulnerable'
            ? `vulnerable (${result.complexity.type}; attack ${JSON.stringify(result.attack.pattern).slice(0, 60)})`
            : `unknown (${result.error.kind})`;
      if (status !== 'safe') for (const w of where) failures.push(`${w} /${source}/${flags}: ${status}`);
    }
    expect(failures, 'rewrite these to run in linear time, or add `// redos-ok: <what bounds or trusts the input>` above').toEqual([]);
  }, GROUP_SIZE * TIMEOUT_MS + RETRY_TIMEOUT_MS);

  it('every waiver gives its reason', () => {
    for (const l of literals.filter((x) => x.waiver !== undefined)) expect(l.waiver!.length, l.where).toBeGreaterThan(10);
  });
});

// Sizes at which the former patterns took from seconds to many minutes; each case must merely finish.
const N = 200_000;

describe('the rewritten functions finish on the inputs that stalled the former patterns', () => {
  it.each<[string, () => unknown]>([
    ['web_fetch text mode: a page of unclosed `[`', () => markdownToText('['.repeat(N))],
    ['web_fetch text mode: a page of `![a](` without `)`', () => markdownToText('![a]('.repeat(N / 5))],
    ['search snippet: unclosed `<`', () => plain('<'.repeat(N))],
    ['grounded answer: `[a](https://x` without `)`', () => markdownLinks('[a](https://x'.repeat(N / 13))],
    ['tool text for people: spaces, and poll directives without a full stop', () => forPeople(`${' '.repeat(N)}x${'Do not poll it '.repeat(N / 15)}`)],
    ['browser snapshot line: blanks before a line separator', () => parseElementLine(`- ${' '.repeat(N)}x\u2028`)],
    ['memory heading: blanks and marks', () => chunkMarkdown(`# a${' #'.repeat(N / 2)} b\u2028`)],
    ['cron message: mentions that never close', () => channelRefsIn('<#a|'.repeat(N / 4))],
    ['/cron add: a quote that never closes', () => parseCronCommand(`add "${' '.repeat(N)}`)],
    ['base URL: a run of `/` before another character', () => joinUrl(`${'/'.repeat(N)}x`, '/search')],
    ['argv[0]: digits before a letter', () => memberName(`${'1'.repeat(N)}x`)],
    ['python flag: `m`s before a line break', () => repoConfigInvocation(['python3', `-${'m'.repeat(N)}\n`])],
    ['model command: /approve and blanks', () => detectControlCommand(`/approve ${' '.repeat(N)}x`)],
    ['skill frontmatter: blanks before a line separator', () => parseSkillMarkdown(`---\nname: x\ndescription:${' '.repeat(N)}\u2028\n---\nbody`, 'x')],
    ['pdf page range: blanks after a dash', () => parsePageRange(`1-${' '.repeat(N)}x`, 10, 50)],
    ['pdf page text: blanks without a line end', () => tidyPageText(`a${' '.repeat(N)}b`)],
    ['media cli output: exit trailers that never close', () => withoutExitTrailer('\n\n(could not start: '.repeat(N / 20))],
    ['channel name: a run of dashes', () => slugify(`${'-'.repeat(N)}x${'-'.repeat(N)}`)],
    ['incident list: closing tags that never close', () => withoutUntrustedTags('</untrusted'.repeat(N / 11))],
  ])('%s', (_what, run) => {
    expect(run).not.toThrow();
  });
});
