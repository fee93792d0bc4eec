// The README and docs/ as a reader follows them: every relative link (and image) reaches a file,
// every #fragment a heading of that page, and every `warden …` command they quote is one the CLI
// has — the command table of src/cli.ts, and for commands with subcommands the words their usage
// (src/cli/usage.ts) offers. A page renamed or a command dropped fails here, not in a reader's hands.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli.js';
import { COMMAND_USAGE } from '../../src/cli/usage.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

/** Text outside fenced code blocks (links in code are not links). */
function prose(text: string): string {
  return text.split(/^```.*$/m).filter((_, i) => i % 2 === 0).join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  return new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

function links(text: string): string[] {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^(https?:|mailto:)/.test(t));
}

/** Every `warden …` a page quotes: inline code starting with it, and command lines in code blocks. */
function quotedCommands(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/`(warden [^`]+)`/g)) out.push(m[1]!);
  // Command lines are in shell blocks (or blocks without a language); a `text` block shows output.
  const parts = text.split(/^```(.*)$/m);
  const blocks = parts.filter((_, i) => i % 4 === 2 && /^(sh|bash|shell|console|)$/.test(parts[i - 1]!.trim()));
  for (const block of blocks) for (const line of block.split('\n')) {
    const m = /^(?:\$ )?(?:npx )?(warden [a-z].*)$/.exec(line.trim());
    if (m) out.push(m[1]!);
  }
  return out;
}

/** The subcommand words a command's usage offers (`approvals list|history|grants`, `exec-approvals import … | export`). */
function subcommands(command: string): Set<string> | undefined {
  const usage = COMMAND_USAGE[command];
  if (!usage) return undefined;
  const words = new Set<string>();
  for (const m of usage.matchAll(new RegExp(`warden ${command} ([a-z][a-z|-]*)`, 'g'))) for (const w of m[1]!.split('|')) words.add(w);
  for (const m of usage.matchAll(/\| ([a-z][a-z-]*) /g)) words.add(m[1]!);
  return words.size > 0 ? words : undefined;
}

describe.each(PAGES)('%s', (page) => {
  const text = read(page);

  it('has no relative link that leads nowhere', () => {
    const broken: string[] = [];
    for (const target of links(text)) {
      const [file, fragment] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(file));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (fragment !== undefined && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(fragment)) broken.push(`${target}: no heading #${fragment}`);
    }
    expect(broken).toEqual([]);
  });

  it('quotes only warden commands the CLI has', () => {
    const unknown: string[] = [];
    for (const quoted of quotedCommands(text)) {
      // `warden start: the web chat cannot listen…` quotes what a command said: its name is the word before the colon.
      const [, said, sub] = quoted.split(/\s+/);
      const command = said?.replace(/:$/, '');
      if (command === undefined || command.startsWith('-') || command === command.toUpperCase()) continue;
      if (command !== 'help' && !(command in COMMANDS)) {
        unknown.push(quoted);
        continue;
      }
      const offered = subcommands(command);
      if (offered && sub !== undefined && /^[a-z][a-z-]*$/.test(sub) && !offered.has(sub)) unknown.push(quoted);
    }
    expect(unknown).toEqual([]);
  });
});

describe('the check itself', () => {
  it('finds links, anchors and commands as a reader reads them', () => {
    const sample = '# Ops listener: health, readiness\n\nSee [x](docs/a.md#b) and ![i](img/p.png), not [w](https://e.com).\n\n```sh\nwarden frob\n$ npx warden tools\n```\n\nRun `warden approvals list` or `warden --help`.\n';
    expect(links(sample)).toEqual(['docs/a.md#b', 'img/p.png']);
    expect([...anchors(sample)]).toEqual(['ops-listener-health-readiness']);
    expect(quotedCommands(sample)).toEqual(['warden approvals list', 'warden --help', 'warden frob', 'warden tools']);
    expect(subcommands('approvals')).toEqual(new Set(['list', 'history', 'grants', 'revoke', 'resolve']));
    expect(subcommands('exec-approvals')).toEqual(new Set(['import', 'export']));
    expect(subcommands('tools')).toBeUndefined();
  });

  it('keeps the README to a few screens (reference text lives in docs/)', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(300);
  });

  it('covers README.md and a page per topic', () => {
    for (const page of ['policy', 'exec', 'approvals', 'plugins', 'mcp', 'control-plane', 'operations', 'openclaw-compatibility', 'security', 'cli']) expect(PAGES).toContain(`docs/${page}.md`);
  });
});
